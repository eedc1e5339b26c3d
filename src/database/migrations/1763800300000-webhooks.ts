import { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhooks, their headers, one delivery per (event, webhook) and every attempt of it. */
export class Webhooks1763800300000 implements MigrationInterface {
  name = 'Webhooks1763800300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events ADD COLUMN fanned_out_at timestamptz`);
    await q.query(
      `CREATE INDEX outbox_events_not_fanned_out ON outbox_events (relayed_at) WHERE fanned_out_at IS NULL`,
    );
    await q.query(`
      CREATE TABLE webhooks (
        id               uuid        PRIMARY KEY,
        name             text        NOT NULL,
        url              text        NOT NULL,
        method           text        NOT NULL DEFAULT 'POST',
        timeout_seconds  integer     NOT NULL DEFAULT 30,
        events           text[]      NOT NULL,
        active           boolean     NOT NULL DEFAULT true,
        secret_encrypted text        NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhooks_events ON webhooks USING gin (events) WHERE active`);
    await q.query(`CREATE INDEX webhooks_created ON webhooks (created_at, id)`);
    await q.query(`
      CREATE TABLE webhook_headers (
        id         uuid        PRIMARY KEY,
        webhook_id uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        name       text        NOT NULL,
        value      text        NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_headers_webhook ON webhook_headers (webhook_id, created_at)`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id              uuid        PRIMARY KEY,
        webhook_id      uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id        uuid        NOT NULL REFERENCES outbox_events (id),
        event_name      text        NOT NULL,
        status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempt_count   integer     NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        next_trigger    text        NOT NULL DEFAULT 'scheduled' CHECK (next_trigger IN ('scheduled', 'manual')),
        locked_until    timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        UNIQUE (event_id, webhook_id)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (webhook_id, updated_at) WHERE status = 'failed'`,
    );
    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        id            bigserial   PRIMARY KEY,
        delivery_id   uuid        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        number        integer     NOT NULL,
        started_at    timestamptz NOT NULL,
        status_code   integer,
        duration_ms   integer     NOT NULL,
        error         text CHECK (error IN ('timeout', 'connection', 'blocked_address', 'http_status')),
        response_body text        NOT NULL DEFAULT '',
        trigger       text        NOT NULL CHECK (trigger IN ('scheduled', 'manual'))
      )`);
    await q.query(`CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, number)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_delivery_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_headers`);
    await q.query(`DROP TABLE webhooks`);
    await q.query(`DROP INDEX outbox_events_not_fanned_out`);
    await q.query(`ALTER TABLE outbox_events DROP COLUMN fanned_out_at`);
  }
}
