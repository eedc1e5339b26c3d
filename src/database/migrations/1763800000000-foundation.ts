import { MigrationInterface, QueryRunner } from 'typeorm';

/** Dashboard users (the dashboard credential) and the transactional outbox. */
export class Foundation1763800000000 implements MigrationInterface {
  name = 'Foundation1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard_users (
        id                   char(24)    PRIMARY KEY,
        org_id               text        NOT NULL DEFAULT '',
        email_address        text        NOT NULL,
        first_name           text        NOT NULL,
        last_name            text        NOT NULL,
        active               boolean     NOT NULL DEFAULT false,
        user_permissions     jsonb       NOT NULL DEFAULT '{}',
        access_key_hash      char(64)    NOT NULL UNIQUE,
        access_key_encrypted text        NOT NULL,
        password_hash        text,
        group_id             text        NOT NULL DEFAULT '',
        password_max_days    integer     NOT NULL DEFAULT 0,
        api_model            jsonb       NOT NULL DEFAULT '{}',
        created_at           timestamptz NOT NULL DEFAULT now(),
        last_login_date      timestamptz,
        password_updated     timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX dashboard_users_org_email ON dashboard_users (org_id, lower(email_address))`);
    await q.query(`
      CREATE TABLE outbox_events (
        id          uuid        PRIMARY KEY,
        name        text        NOT NULL,
        payload     jsonb       NOT NULL,
        occurred_at timestamptz NOT NULL,
        relayed_at  timestamptz
      )`);
    await q.query(`CREATE INDEX outbox_events_unrelayed ON outbox_events (occurred_at) WHERE relayed_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE outbox_events`);
    await q.query(`DROP TABLE dashboard_users`);
  }
}
