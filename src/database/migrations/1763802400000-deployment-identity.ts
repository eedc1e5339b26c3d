import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The database's identity, for a deployment that sets no QUEUE_PREFIX (see settleQueuePrefix): one row with a
 * random id, made once. A database that already holds webhooks is marked to keep `gwm`, the prefix it was served
 * under until now, so that the jobs and counters it has in Redis stay its own.
 */
export class DeploymentIdentity1763802400000 implements MigrationInterface {
  name = 'DeploymentIdentity1763802400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE deployment (
        only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        keeps_shared_prefix boolean NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO deployment (keeps_shared_prefix) SELECT EXISTS (SELECT 1 FROM webhooks)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE deployment');
  }
}
