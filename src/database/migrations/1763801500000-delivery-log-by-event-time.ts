import { MigrationInterface, QueryRunner } from 'typeorm';
import { ENSURE_PARTITIONS_BY_FINISH } from './1763801400000-partitioned-delivery-log';

/**
 * The delivery log partitioned by a key that never changes: the time of the event (`occurred_at` of the outbox
 * row). Deliveries carry it as `event_occurred_at`, and so does each attempt, so the three log tables share one
 * partition key and one day of them lives in three partitions of the same name suffix:
 *
 * - A row never moves between partitions: finishing a delivery, redelivering or recovering it is an ordinary
 *   update in place (no delete + insert with all their indexes, and no "tuple was moved to another partition"
 *   error for a concurrent update of the same delivery). Attempts are append-only.
 * - One delivery per (event, webhook) again: UNIQUE (event_id, webhook_id, event_occurred_at) is unique across
 *   the whole table, because an event's id determines its time (one outbox row per id), so two rows with the
 *   same event and webhook always fall into the same partition, where the index sees both.
 * - One attempt per (delivery, number): the attempts' primary key.
 * - Retention drops a whole day (outbox, deliveries and attempts together) once it is past retention and holds
 *   no pending delivery nor unrelayed event; a day with pending work waits for it.
 *
 * Indexes are the fewest the dispatcher and the log's routes need (each is written on every insert):
 * deliveries: the key (claims and the log address a row by id and its partition key, so every hot statement
 * prunes to one partition), the (event, webhook) key (the relay's arbiter), `stats` (health counts and the
 * log newest first, from the index alone), `due` (the reconciler's scan of pending work), `pending_order` (the
 * head of an ordered webhook; the log's pending filter) and `failed` (recovery since a time; the log's failed
 * filter). `locked_until`, which every claim writes, is in none of them, and day partitions leave room in
 * each page (fillfactor), so a claim is a HOT update that touches no index. Attempts: the key and the two
 * health indexes.
 *
 * Every row is carried over. An attempt gets its delivery's event time; a delivery whose event retention
 * already removed (the old layout kept finished deliveries by their finish time) takes its own creation time,
 * which the relay set right after the event. The attempts' surrogate `id` is dropped (the key is the delivery
 * and the number; the log orders by number); should the old log hold a second record of one attempt (a race of
 * the old layout), the first one is kept.
 */
export class DeliveryLogByEventTime1763801500000 implements MigrationInterface {
  name = 'DeliveryLogByEventTime1763801500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER webhooks_delete_attempts ON webhooks`);
    await q.query(`DROP FUNCTION webhooks_delete_attempts()`);
    await q.query(`DROP FUNCTION delivery_log_ensure_partitions(date, date)`);
    await renameLog(q, ['webhook_deliveries', 'webhook_delivery_attempts'], '_f');

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id                uuid        NOT NULL,
        webhook_id        uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        event_id          uuid        NOT NULL,
        event_name        text        NOT NULL,
        status            text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempt_count     integer     NOT NULL DEFAULT 0,
        next_attempt_at   timestamptz,
        next_trigger      text        NOT NULL DEFAULT 'scheduled' CHECK (next_trigger IN ('scheduled', 'manual')),
        locked_until      timestamptz,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        event_seq         bigint,
        held              text CHECK (held IN ('rate_limit')),
        event_occurred_at timestamptz NOT NULL,
        CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, event_occurred_at),
        CONSTRAINT webhook_deliveries_event_webhook UNIQUE (event_id, webhook_id, event_occurred_at)
      ) PARTITION BY RANGE (event_occurred_at)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_stats ON webhook_deliveries (webhook_id, created_at, id) INCLUDE (status, attempt_count)`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_pending_order ON webhook_deliveries (webhook_id, event_seq) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (webhook_id, created_at, id) WHERE status = 'failed'`,
    );
    await q.query(
      `CREATE TABLE webhook_deliveries_default PARTITION OF webhook_deliveries DEFAULT WITH (fillfactor = ${DELIVERY_FILLFACTOR})`,
    );

    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        delivery_id       uuid        NOT NULL,
        number            integer     NOT NULL,
        started_at        timestamptz NOT NULL,
        status_code       integer,
        duration_ms       integer     NOT NULL,
        error             text CHECK (error IN ('timeout', 'connection', 'blocked_address', 'http_status')),
        response_body     text        NOT NULL DEFAULT '',
        trigger           text        NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
        webhook_id        uuid,
        event_occurred_at timestamptz NOT NULL,
        CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (delivery_id, number, event_occurred_at)
      ) PARTITION BY RANGE (event_occurred_at)`);
    // health: latency over a window, and the last success and the last failure, from one side each
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_ok ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NULL`,
    );
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_failed ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NOT NULL`,
    );
    await q.query(`CREATE TABLE webhook_delivery_attempts_default PARTITION OF webhook_delivery_attempts DEFAULT`);

    await q.query(ensurePartitionsByEventTime(DELIVERY_FILLFACTOR));
    // the days the outbox has partitions for (the default retention and a few ahead) get theirs too
    await q.query(`
      SELECT delivery_log_ensure_partitions(min(d), max(d)) FROM (
        SELECT to_date(right(c.relname, 8), 'YYYYMMDD') AS d FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'outbox_events'::regclass AND c.relname ~ '_p[0-9]{8}$') days`);

    await q.query(`
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, next_trigger,
                                      locked_until, created_at, updated_at, event_seq, held, event_occurred_at)
      SELECT d.id, d.webhook_id, d.event_id, d.event_name, d.status, d.attempt_count, d.next_attempt_at, d.next_trigger,
             d.locked_until, d.created_at, d.updated_at, d.event_seq, d.held, coalesce(e.occurred_at, d.created_at)
        FROM webhook_deliveries_f d LEFT JOIN outbox_events e ON e.id = d.event_id
       ORDER BY d.created_at, d.id`);
    await q.query(`
      INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger,
                                             webhook_id, event_occurred_at)
      SELECT a.delivery_id, a.number, a.started_at, a.status_code, a.duration_ms, a.error, a.response_body, a.trigger,
             a.webhook_id, coalesce(d.event_occurred_at, a.started_at)
        FROM webhook_delivery_attempts_f a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id
       ORDER BY a.id
      ON CONFLICT DO NOTHING`);
    await q.query(`DROP TABLE webhook_delivery_attempts_f`);
    await q.query(`DROP TABLE webhook_deliveries_f`);

    // A webhook's deliveries go by their foreign key's cascade; their attempts, which have none, go here, after
    // the cascade (triggers fire in name order, the foreign key's RI_ConstraintTrigger first): the cascade waits
    // for an attempt being recorded for one of the deliveries to commit, so this delete, reading afresh, sees it.
    await q.query(`
      CREATE FUNCTION webhooks_delete_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_delivery_attempts WHERE webhook_id = OLD.id;
        RETURN OLD;
      END $$`);
    await q.query(
      `CREATE TRIGGER webhooks_delete_attempts AFTER DELETE ON webhooks FOR EACH ROW EXECUTE FUNCTION webhooks_delete_attempts()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER webhooks_delete_attempts ON webhooks`);
    await q.query(`DROP FUNCTION webhooks_delete_attempts()`);
    await q.query(`DROP FUNCTION delivery_log_ensure_partitions(date, date)`);
    await renameLog(q, ['webhook_deliveries', 'webhook_delivery_attempts'], '_e');

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id              uuid        NOT NULL,
        webhook_id      uuid        NOT NULL,
        event_id        uuid        NOT NULL,
        event_name      text        NOT NULL,
        status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempt_count   integer     NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        next_trigger    text        NOT NULL DEFAULT 'scheduled' CHECK (next_trigger IN ('scheduled', 'manual')),
        locked_until    timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        updated_at      timestamptz NOT NULL DEFAULT now(),
        event_seq       bigint,
        held            text CHECK (held IN ('rate_limit')),
        finished_at     timestamptz NOT NULL DEFAULT 'infinity'
      ) PARTITION BY RANGE (finished_at)`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, finished_at)`,
    );
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_webhook UNIQUE (event_id, webhook_id, finished_at)`,
    );
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_stats ON webhook_deliveries (webhook_id, created_at, id) INCLUDE (status, attempt_count)`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_webhook_status ON webhook_deliveries (webhook_id, status, created_at DESC, id)`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (webhook_id, updated_at) WHERE status = 'failed'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_pending_order ON webhook_deliveries (webhook_id, event_seq) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_held ON webhook_deliveries (held) WHERE held IS NOT NULL`);
    await q.query(
      `CREATE TABLE webhook_deliveries_open PARTITION OF webhook_deliveries FOR VALUES FROM ('infinity') TO (MAXVALUE)`,
    );
    await q.query(`CREATE TABLE webhook_deliveries_default PARTITION OF webhook_deliveries DEFAULT`);

    await q.query(`CREATE SEQUENCE webhook_delivery_attempts_id_seq`);
    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        id                   bigint      NOT NULL DEFAULT nextval('webhook_delivery_attempts_id_seq'),
        delivery_id          uuid        NOT NULL,
        number               integer     NOT NULL,
        started_at           timestamptz NOT NULL,
        status_code          integer,
        duration_ms          integer     NOT NULL,
        error                text CHECK (error IN ('timeout', 'connection', 'blocked_address', 'http_status')),
        response_body        text        NOT NULL DEFAULT '',
        trigger              text        NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
        webhook_id           uuid,
        delivery_finished_at timestamptz NOT NULL DEFAULT 'infinity'
      ) PARTITION BY RANGE (delivery_finished_at)`);
    await q.query(`ALTER SEQUENCE webhook_delivery_attempts_id_seq OWNED BY webhook_delivery_attempts.id`);
    await q.query(
      `ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (id, delivery_finished_at)`,
    );
    await q.query(`CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, number)`);
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_ok ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NULL`,
    );
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_failed ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NOT NULL`,
    );
    await q.query(
      `CREATE TABLE webhook_delivery_attempts_open PARTITION OF webhook_delivery_attempts FOR VALUES FROM ('infinity') TO (MAXVALUE)`,
    );
    await q.query(`CREATE TABLE webhook_delivery_attempts_default PARTITION OF webhook_delivery_attempts DEFAULT`);

    await q.query(ENSURE_PARTITIONS_BY_FINISH);
    await q.query(
      `SELECT delivery_log_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 30, (now() AT TIME ZONE 'UTC')::date + 3)`,
    );

    await q.query(`
      INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, next_trigger,
                                      locked_until, created_at, updated_at, event_seq, held, finished_at)
      SELECT id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, next_trigger, locked_until, created_at,
             updated_at, event_seq, held, CASE WHEN status = 'pending' THEN 'infinity'::timestamptz ELSE updated_at END
        FROM webhook_deliveries_e`);
    await q.query(`
      INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger,
                                             webhook_id, delivery_finished_at)
      SELECT a.delivery_id, a.number, a.started_at, a.status_code, a.duration_ms, a.error, a.response_body, a.trigger, a.webhook_id,
             coalesce(d.finished_at, 'infinity')
        FROM webhook_delivery_attempts_e a LEFT JOIN webhook_deliveries d ON d.id = a.delivery_id
       ORDER BY a.delivery_id, a.number`);
    await q.query(`DROP TABLE webhook_delivery_attempts_e`);
    await q.query(`DROP TABLE webhook_deliveries_e`);

    await q.query(`
      CREATE FUNCTION webhooks_delete_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_delivery_attempts a USING webhook_deliveries d
         WHERE d.webhook_id = OLD.id AND a.delivery_id = d.id AND a.delivery_finished_at = d.finished_at;
        RETURN OLD;
      END $$`);
    await q.query(
      `CREATE TRIGGER webhooks_delete_attempts BEFORE DELETE ON webhooks FOR EACH ROW EXECUTE FUNCTION webhooks_delete_attempts()`,
    );
  }
}

/**
 * Free space left in each page of a delivery partition, so that the claim's update (of `locked_until`, in no
 * index) finds room for the new row version on the same page: a HOT update, with no index entry written.
 */
const DELIVERY_FILLFACTOR = 80;

/**
 * Renames the tables of the log (and each of their partitions) with `suffix`, and their own index names, which
 * are schema-wide, so the new tables can take the names. Partitions' indexes have generated names, which
 * Postgres keeps unique by itself.
 */
async function renameLog(q: QueryRunner, tables: string[], suffix: string): Promise<void> {
  for (const t of tables) {
    await q.query(`
      DO $$ DECLARE r record; BEGIN
        FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '${t}'::regclass LOOP
          EXECUTE format('ALTER TABLE %I RENAME TO %I', r.relname, r.relname || '${suffix}');
        END LOOP;
        FOR r IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '${t}' LOOP
          EXECUTE format('ALTER INDEX %I RENAME TO %I', r.indexname, left(r.indexname, 60) || '${suffix}');
        END LOOP;
      END $$`);
    await q.query(`ALTER TABLE ${t} RENAME TO ${t}${suffix}`);
  }
}

/**
 * Creates the missing day partitions of the three log tables for [from_day, to_day] (UTC days), all three by
 * the event's time, and returns how many it made. A day whose rows already sit in a table's default partition is
 * left to it (attaching a partition over them would fail). Each partition is created apart and then attached,
 * which locks the parent only in SHARE UPDATE EXCLUSIVE mode (reads and writes go on). Delivery partitions leave
 * room for HOT updates (`fillfactor`). Used by this migration and by the workers' retention pass, which keeps a
 * few days ahead. `create` is `CREATE OR REPLACE` for a later migration that changes the fillfactor.
 */
export const ensurePartitionsByEventTime = (fillfactor: number, create = 'CREATE') => `
${create} FUNCTION delivery_log_ensure_partitions(from_day date, to_day date) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  d date;
  t text;
  col text;
  part text;
  lo timestamptz;
  hi timestamptz;
  taken boolean;
  made integer := 0;
BEGIN
  FOR d IN SELECT generate_series(from_day, to_day, interval '1 day')::date LOOP
    lo := d::timestamp AT TIME ZONE 'UTC';
    hi := (d + 1)::timestamp AT TIME ZONE 'UTC';
    FOREACH t IN ARRAY ARRAY['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts'] LOOP
      part := t || '_p' || to_char(d, 'YYYYMMDD');
      CONTINUE WHEN to_regclass(quote_ident(part)) IS NOT NULL;
      col := CASE t WHEN 'outbox_events' THEN 'occurred_at' ELSE 'event_occurred_at' END;
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', t || '_default', col, col) INTO taken USING lo, hi;
      CONTINUE WHEN taken;
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)', part, t);
      IF t = 'webhook_deliveries' THEN
        EXECUTE format('ALTER TABLE %I SET (fillfactor = ${fillfactor})', part);
      END IF;
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, part, lo, hi);
      made := made + 1;
    END LOOP;
  END LOOP;
  RETURN made;
END $$`;
