import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deleting a webhook deleted its whole delivery history (deliveries by the foreign key's cascade, attempts by
 * trigger) in the request's transaction, with the webhook's row locked meanwhile, so the relay waited on it for
 * every event the webhook subscribed to: about a second at 10 000 deliveries, minutes at millions. Now the request
 * only marks the webhook deleted (`deleted_at`), which takes it out of every read, and the workers' purge
 * (WebhookPurge) deletes its history in small batches, then the row itself. The partial index finds the webhooks
 * waiting for it. Down finishes the purge of those still marked, in one statement, as the old delete did.
 *
 * The trigger that deletes a deleted webhook's attempts asked for `webhook_id = $1`, which neither of the
 * attempts' partial indexes on the webhook (error IS NULL, error IS NOT NULL) answers, so each delete of a webhook
 * read every attempt of the log; it now asks each index apart.
 */
export class WebhooksDeletedInTheBackground1763802700000 implements MigrationInterface {
  name = 'WebhooksDeletedInTheBackground1763802700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN deleted_at timestamptz`);
    await q.query(`CREATE INDEX webhooks_deleted ON webhooks (deleted_at) WHERE deleted_at IS NOT NULL`);
    await q.query(`
      CREATE OR REPLACE FUNCTION webhooks_delete_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_delivery_attempts WHERE webhook_id = OLD.id AND error IS NULL;
        DELETE FROM webhook_delivery_attempts WHERE webhook_id = OLD.id AND error IS NOT NULL;
        RETURN OLD;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM webhooks WHERE deleted_at IS NOT NULL`);
    await q.query(`
      CREATE OR REPLACE FUNCTION webhooks_delete_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_delivery_attempts WHERE webhook_id = OLD.id;
        RETURN OLD;
      END $$`);
    await q.query(`DROP INDEX webhooks_deleted`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN deleted_at`);
  }
}
