import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Managed API definitions (gateway OAS routes, dashboard listing) and hourly analytics rollups.
 *
 * api_definitions keeps the OpenAPI document as sent (`oas`, json: key order preserved) next to the
 * columns the dashboard filters and sorts on, all computed on write: name, org_id, categories,
 * auth_types, child_ids/is_child (versioning), api_type, the projected 2.7 list entry, timestamps.
 * Substring search on lower(name) uses a trigram index when pg_trgm can be installed, and a plain
 * sequential filter over the org's index range otherwise.
 *
 * analytics_hourly holds one row per (oauth client, org, hour, api, path, status code), upserted per
 * ingested batch; the dashboard aggregates these rows, never raw records.
 */
export class Dashboard1763800200000 implements MigrationInterface {
  name = 'Dashboard1763800200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX dashboard_users_org_created ON dashboard_users (org_id, created_at, id)`);

    await q.query(`
      CREATE TABLE api_definitions (
        id          text        PRIMARY KEY,
        org_id      text        NOT NULL DEFAULT '',
        name        text        NOT NULL,
        api_type    text        NOT NULL DEFAULT 'rest',
        categories  text[]      NOT NULL DEFAULT '{}',
        auth_types  text[]      NOT NULL DEFAULT '{}',
        child_ids   text[]      NOT NULL DEFAULT '{}',
        is_child    boolean     NOT NULL DEFAULT false,
        oas         json        NOT NULL,
        list_entry  json        NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // Org-scoped listing (every sort order), and the same orders for super users across organisations.
    await q.query(`CREATE INDEX api_definitions_org_created ON api_definitions (org_id, created_at, id)`);
    await q.query(`CREATE INDEX api_definitions_org_updated ON api_definitions (org_id, updated_at, id)`);
    await q.query(`CREATE INDEX api_definitions_org_name ON api_definitions (org_id, lower(name), id)`);
    await q.query(`CREATE INDEX api_definitions_created ON api_definitions (created_at, id)`);
    await q.query(`CREATE INDEX api_definitions_updated ON api_definitions (updated_at, id)`);
    await q.query(`CREATE INDEX api_definitions_name ON api_definitions (lower(name), id)`);
    await q.query(`CREATE INDEX api_definitions_categories ON api_definitions USING gin (categories)`);
    await q.query(`CREATE INDEX api_definitions_auth_types ON api_definitions USING gin (auth_types)`);
    await q.query(`CREATE INDEX api_definitions_child_ids ON api_definitions USING gin (child_ids)`);
    // pg_trgm ships with PostgreSQL's contrib (and the embedded PostgreSQL) and is a trusted extension;
    // where it is missing or may not be installed, `q` falls back to a filtered index range scan.
    await q.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
          BEGIN
            CREATE EXTENSION IF NOT EXISTS pg_trgm;
          EXCEPTION WHEN insufficient_privilege OR feature_not_supported THEN
            RAISE NOTICE 'pg_trgm not installed: name search without a trigram index';
          END;
        END IF;
        IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
          EXECUTE 'CREATE INDEX api_definitions_name_trgm ON api_definitions USING gin (lower(name) gin_trgm_ops)';
        END IF;
      END
      $$`);

    await q.query(`
      CREATE TABLE analytics_hourly (
        oauth_id             text             NOT NULL,
        org_id               text             NOT NULL,
        hour                 timestamptz      NOT NULL,
        api_id               text             NOT NULL,
        path                 text             NOT NULL,
        code                 integer          NOT NULL,
        hits                 bigint           NOT NULL,
        latency_sum          double precision NOT NULL,
        latency_min          double precision NOT NULL,
        latency_max          double precision NOT NULL,
        upstream_latency_sum double precision NOT NULL,
        upstream_latency_min double precision NOT NULL,
        upstream_latency_max double precision NOT NULL,
        request_time_sum     double precision NOT NULL,
        request_time_min     double precision NOT NULL,
        request_time_max     double precision NOT NULL,
        last_hit             timestamptz      NOT NULL,
        api_name             text             NOT NULL DEFAULT '',
        url                  text             NOT NULL DEFAULT '',
        key                  text             NOT NULL DEFAULT '',
        alias                text             NOT NULL DEFAULT '',
        iso_country          text             NOT NULL DEFAULT '',
        PRIMARY KEY (oauth_id, org_id, hour, api_id, path, code)
      )`);
    await q.query(`CREATE INDEX analytics_hourly_client_hour ON analytics_hourly (oauth_id, hour)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE analytics_hourly`);
    await q.query(`DROP TABLE api_definitions`);
    await q.query(`DROP INDEX dashboard_users_org_created`);
  }
}
