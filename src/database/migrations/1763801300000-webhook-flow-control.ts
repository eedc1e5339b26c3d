import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Flow control and health of webhooks: automatic disabling (why and when, and since when every attempt has
 * failed), an optional rate limit and ordered delivery; the event order deliveries follow; and the indexes
 * the health figures are read from.
 */
export class WebhookFlowControl1763801300000 implements MigrationInterface {
  name = 'WebhookFlowControl1763801300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhooks
        ADD COLUMN disabled_reason text,
        ADD COLUMN disabled_at     timestamptz,
        ADD COLUMN failing_since   timestamptz,
        ADD COLUMN rate_limit      integer CHECK (rate_limit BETWEEN 1 AND 10000),
        ADD COLUMN ordered         boolean NOT NULL DEFAULT false`);
    // Event order: a sequence, so events of one transaction keep the order they were recorded in. Existing
    // events keep NULL (no rewrite of a large table); only webhooks made ordered from now on read it.
    await q.query(`CREATE SEQUENCE outbox_events_seq`);
    await q.query(`ALTER TABLE outbox_events ADD COLUMN seq bigint`);
    await q.query(`ALTER TABLE outbox_events ALTER COLUMN seq SET DEFAULT nextval('outbox_events_seq')`);
    await q.query(`ALTER SEQUENCE outbox_events_seq OWNED BY outbox_events.seq`);
    await q.query(`
      ALTER TABLE webhook_deliveries
        ADD COLUMN event_seq bigint,
        ADD COLUMN held      text CHECK (held IN ('rate_limit'))`);
    // the head of an ordered webhook: its oldest pending delivery
    await q.query(
      `CREATE INDEX webhook_deliveries_pending_order ON webhook_deliveries (webhook_id, event_seq) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_held ON webhook_deliveries (held) WHERE held IS NOT NULL`);
    // health: counts by status over a time window, from the index alone. It also serves the delivery log
    // (newest first, by a backward scan), so it replaces that index rather than adding to every insert.
    await q.query(
      `CREATE INDEX webhook_deliveries_stats ON webhook_deliveries (webhook_id, created_at, id) INCLUDE (status, attempt_count)`,
    );
    await q.query(`DROP INDEX webhook_deliveries_webhook`);
    await q.query(`ALTER TABLE webhook_delivery_attempts ADD COLUMN webhook_id uuid`);
    await q.query(
      `UPDATE webhook_delivery_attempts a SET webhook_id = d.webhook_id FROM webhook_deliveries d WHERE d.id = a.delivery_id`,
    );
    // health: latency over a window, and the last success and the last failure, from one side each
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_ok ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NULL`,
    );
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_failed ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_delivery_attempts_failed`);
    await q.query(`DROP INDEX webhook_delivery_attempts_ok`);
    await q.query(`ALTER TABLE webhook_delivery_attempts DROP COLUMN webhook_id`);
    await q.query(`CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id)`);
    await q.query(`DROP INDEX webhook_deliveries_stats`);
    await q.query(`DROP INDEX webhook_deliveries_held`);
    await q.query(`DROP INDEX webhook_deliveries_pending_order`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN held, DROP COLUMN event_seq`);
    await q.query(`ALTER TABLE outbox_events DROP COLUMN seq`);
    await q.query(
      `ALTER TABLE webhooks DROP COLUMN ordered, DROP COLUMN rate_limit, DROP COLUMN failing_since, DROP COLUMN disabled_at, DROP COLUMN disabled_reason`,
    );
  }
}
