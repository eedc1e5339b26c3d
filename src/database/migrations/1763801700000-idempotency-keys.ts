import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency keys of the portal, dashboard and admin routes. A row is one key of one caller (`scope`: whose
 * credential) on one operation (`method`, `route` template). While the first request with the key runs, the row
 * is its claim: `status` is NULL, `owner` names the request, and `expires_at` is when the claim lapses (a request
 * that died mid-way). Once answered, `status` and `body_sealed` hold the answer (the body encrypted with
 * ENCRYPTION_KEY: answers carry credentials), `fingerprint` a keyed digest of the request it answered, and
 * `expires_at` is when the key may be used afresh; expired rows are deleted in batches.
 */
export class IdempotencyKeys1763801700000 implements MigrationInterface {
  name = 'IdempotencyKeys1763801700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        scope text NOT NULL,
        method text NOT NULL,
        route text NOT NULL,
        key text NOT NULL,
        fingerprint text NOT NULL,
        owner uuid,
        status smallint CHECK (status BETWEEN 100 AND 599),
        body_sealed text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (scope, method, route, key),
        CHECK ((status IS NULL) = (body_sealed IS NULL))
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
