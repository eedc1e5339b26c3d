import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook signing keys with rotation, and test sends.
 * - `webhooks.secret_encrypted` keeps the current key (a `whsec_` secret, or a `whsk_` Ed25519 private key
 *   for `signature_scheme` v1a), sealed. During a rotation's grace period the previous key is kept, sealed
 *   too, until `previous_secret_expires_at`; then it is erased (all three previous_* columns set NULL).
 * - An outbox event may be meant for one webhook alone (a test send): `target_webhook_id` names it, and
 *   the relay gives it a delivery to that webhook only, whatever the webhook subscribes to.
 */
export class WebhookSigningKeys1763801200000 implements MigrationInterface {
  name = 'WebhookSigningKeys1763801200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks ADD COLUMN signature_scheme text NOT NULL DEFAULT 'v1' CHECK (signature_scheme IN ('v1', 'v1a'))`,
    );
    await q.query(`ALTER TABLE webhooks ADD COLUMN previous_secret_encrypted text`);
    await q.query(
      `ALTER TABLE webhooks ADD COLUMN previous_signature_scheme text CHECK (previous_signature_scheme IN ('v1', 'v1a'))`,
    );
    await q.query(`ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at timestamptz`);
    await q.query(`
      ALTER TABLE webhooks ADD CONSTRAINT webhooks_previous_key_complete CHECK (
        (previous_secret_encrypted IS NULL AND previous_signature_scheme IS NULL AND previous_secret_expires_at IS NULL) OR
        (previous_secret_encrypted IS NOT NULL AND previous_signature_scheme IS NOT NULL AND previous_secret_expires_at IS NOT NULL))`);
    await q.query(
      `CREATE INDEX webhooks_previous_key_expiry ON webhooks (previous_secret_expires_at) WHERE previous_secret_expires_at IS NOT NULL`,
    );
    await q.query(`ALTER TABLE outbox_events ADD COLUMN target_webhook_id uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events DROP COLUMN target_webhook_id`);
    await q.query(`DROP INDEX webhooks_previous_key_expiry`);
    await q.query(`ALTER TABLE webhooks DROP CONSTRAINT webhooks_previous_key_complete`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN previous_secret_expires_at`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN previous_signature_scheme`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN previous_secret_encrypted`);
    await q.query(`ALTER TABLE webhooks DROP COLUMN signature_scheme`);
  }
}
