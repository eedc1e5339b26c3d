import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery log at scale: outbox_events, webhook_deliveries and webhook_delivery_attempts become
 * natively partitioned by day, so retention drops whole partitions (a brief catalog lock, no row-by-row
 * DELETE, no bloat) and pending work is never touched:
 *
 * - webhook_deliveries by `finished_at`, the time a delivery became delivered or failed. A pending delivery
 *   has `finished_at = 'infinity'` and lives in the open partition `webhook_deliveries_open`; when it
 *   finishes, the update moves it to that day's partition. Dropping a day therefore can never remove
 *   pending work, and the dispatcher's hot statements (claim, record, the reconciler's scan) touch only
 *   the open partition, which holds just the pending rows.
 * - webhook_delivery_attempts by `delivery_finished_at`, a copy of their delivery's `finished_at`, so a
 *   delivery and its attempts share a day and go together (attempts made while the delivery was pending
 *   move with it when it finishes).
 * - outbox_events by `occurred_at` (set once). A day of events is dropped only once it is past retention
 *   plus a day, holds no unrelayed event and no pending delivery still reads its payload.
 *
 * Rows for a day without its partition (the worker was down for days) land in a DEFAULT partition, which
 * retention cleans with small batched deletes. Unique keys of a partitioned table must contain the
 * partition key, so ids are unique together with it (ids are random UUIDs; the relay's claim keeps an event
 * from being fanned out twice), and the log tables no longer reference each other by foreign key (a
 * referenced partition cannot be dropped cheaply): deleting a webhook removes its attempts by trigger.
 *
 * Existing rows are copied over; columns another migration added to the old tables come along (LIKE), with
 * their defaults and checks (the event order sequence moves to the new outbox table), and every index of
 * the old tables is made again on the new ones (partitioned: each partition gets its own).
 */
export class PartitionedDeliveryLog1763801400000 implements MigrationInterface {
  name = 'PartitionedDeliveryLog1763801400000';

  async up(q: QueryRunner): Promise<void> {
    const old = ['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts'];
    await q.query(
      `ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT IF EXISTS webhook_delivery_attempts_delivery_id_fkey`,
    );
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT IF EXISTS webhook_deliveries_event_id_fkey`);
    for (const t of old) {
      await q.query(`ALTER TABLE ${t} RENAME TO ${t}_v1`);
      // index names are schema-wide: free them for the new tables
      await q.query(`
        DO $$ DECLARE i record; BEGIN
          FOR i IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '${t}_v1' LOOP
            EXECUTE format('ALTER INDEX %I RENAME TO %I', i.indexname, left(i.indexname, 56) || '_v1');
          END LOOP;
        END $$`);
    }

    await q.query(
      `CREATE TABLE outbox_events (LIKE outbox_events_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED) PARTITION BY RANGE (occurred_at)`,
    );
    await q.query(`ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_pkey PRIMARY KEY (id, occurred_at)`);
    await q.query(`CREATE INDEX outbox_events_unrelayed ON outbox_events (occurred_at) WHERE relayed_at IS NULL`);
    // the event order sequence belongs to the new table's column (the old table and its column go below)
    await q.query(`ALTER SEQUENCE outbox_events_seq OWNED BY outbox_events.seq`);
    await q.query(`CREATE TABLE outbox_events_default PARTITION OF outbox_events DEFAULT`);

    // finished_at comes after every column of the old table, so INSERT ... SELECT old.*, <finished_at> lines up
    await q.query(
      `CREATE TABLE webhook_deliveries (LIKE webhook_deliveries_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED,
                                        finished_at timestamptz NOT NULL DEFAULT 'infinity') PARTITION BY RANGE (finished_at)`,
    );
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, finished_at)`,
    );
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_webhook UNIQUE (event_id, webhook_id, finished_at)`,
    );
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_webhook_id_fkey FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE`,
    );
    // health counts over a window and the delivery log newest first (backward scan), from the index alone
    await q.query(
      `CREATE INDEX webhook_deliveries_stats ON webhook_deliveries (webhook_id, created_at, id) INCLUDE (status, attempt_count)`,
    );
    // the delivery log filtered by status: without it a rare status means walking the whole webhook's log
    await q.query(
      `CREATE INDEX webhook_deliveries_webhook_status ON webhook_deliveries (webhook_id, status, created_at DESC, id)`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (webhook_id, updated_at) WHERE status = 'failed'`,
    );
    // the head of an ordered webhook (its oldest pending delivery), and the deliveries held by a rate limit
    await q.query(
      `CREATE INDEX webhook_deliveries_pending_order ON webhook_deliveries (webhook_id, event_seq) WHERE status = 'pending'`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_held ON webhook_deliveries (held) WHERE held IS NOT NULL`);
    await q.query(
      `CREATE TABLE webhook_deliveries_open PARTITION OF webhook_deliveries FOR VALUES FROM ('infinity') TO (MAXVALUE)`,
    );
    await q.query(`CREATE TABLE webhook_deliveries_default PARTITION OF webhook_deliveries DEFAULT`);

    await q.query(
      `CREATE TABLE webhook_delivery_attempts (LIKE webhook_delivery_attempts_v1 INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED,
                                               delivery_finished_at timestamptz NOT NULL DEFAULT 'infinity') PARTITION BY RANGE (delivery_finished_at)`,
    );
    await q.query(`ALTER SEQUENCE webhook_delivery_attempts_id_seq OWNED BY webhook_delivery_attempts.id`);
    await q.query(
      `ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT webhook_delivery_attempts_pkey PRIMARY KEY (id, delivery_finished_at)`,
    );
    await q.query(`CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, number)`);
    // health: latency over a window, and the last success and the last failure, from one side each
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
    // a partition for each day from yesterday back to the oldest row carried over, within the default retention
    // (30 days), and a few ahead; older rows wait in the default partitions, which retention trims in batches. A
    // fresh database gets only the days the workers' retention pass keeps ready (yesterday to three ahead), not
    // thirty empty days of partitions and their indexes.
    await q.query(`
      SELECT delivery_log_ensure_partitions(
               greatest(today - 30, least(today - 1,
                 (SELECT min(occurred_at AT TIME ZONE 'UTC')::date FROM outbox_events_v1),
                 (SELECT min(updated_at AT TIME ZONE 'UTC')::date FROM webhook_deliveries_v1 WHERE status <> 'pending'))),
               today + 3)
        FROM (SELECT (now() AT TIME ZONE 'UTC')::date AS today) t`);

    await q.query(`INSERT INTO outbox_events SELECT * FROM outbox_events_v1`);
    await q.query(
      `INSERT INTO webhook_deliveries SELECT d.*, CASE WHEN d.status = 'pending' THEN 'infinity'::timestamptz ELSE d.updated_at END FROM webhook_deliveries_v1 d`,
    );
    await q.query(
      `INSERT INTO webhook_delivery_attempts SELECT a.*, d.finished_at FROM webhook_delivery_attempts_v1 a JOIN webhook_deliveries d ON d.id = a.delivery_id`,
    );
    for (const t of old) await q.query(`DROP TABLE ${t}_v1`);

    await q.query(`
      CREATE FUNCTION webhooks_delete_attempts() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM webhook_delivery_attempts a USING webhook_deliveries d
         WHERE d.webhook_id = OLD.id AND a.delivery_id = d.id AND a.delivery_finished_at = d.finished_at;
        RETURN OLD;
      END $$`);
    // a webhook's deliveries go by their foreign key's cascade; their attempts, which have none, go here
    await q.query(
      `CREATE TRIGGER webhooks_delete_attempts BEFORE DELETE ON webhooks FOR EACH ROW EXECUTE FUNCTION webhooks_delete_attempts()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER webhooks_delete_attempts ON webhooks`);
    await q.query(`DROP FUNCTION webhooks_delete_attempts()`);
    await q.query(`DROP FUNCTION delivery_log_ensure_partitions(date, date)`);
    for (const t of ['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts']) {
      await q.query(`ALTER TABLE ${t} RENAME TO ${t}_p`);
      await q.query(`
        DO $$ DECLARE i record; BEGIN
          FOR i IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '${t}_p' LOOP
            EXECUTE format('ALTER INDEX %I RENAME TO %I', i.indexname, left(i.indexname, 57) || '_p');
          END LOOP;
        END $$`);
    }
    await q.query(
      `CREATE TABLE outbox_events (LIKE outbox_events_p INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)`,
    );
    await q.query(`ALTER TABLE outbox_events ADD PRIMARY KEY (id)`);
    await q.query(`CREATE INDEX outbox_events_unrelayed ON outbox_events (occurred_at) WHERE relayed_at IS NULL`);
    await q.query(`ALTER SEQUENCE outbox_events_seq OWNED BY outbox_events.seq`);
    await q.query(`INSERT INTO outbox_events SELECT * FROM outbox_events_p`);

    await q.query(
      `CREATE TABLE webhook_deliveries (LIKE webhook_deliveries_p INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)`,
    );
    // rows whose referenced row is gone (orphans the foreign keys would refuse) are not carried back
    await q.query(
      `INSERT INTO webhook_deliveries SELECT * FROM webhook_deliveries_p d WHERE EXISTS (SELECT 1 FROM outbox_events e WHERE e.id = d.event_id)`,
    );
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN finished_at`);
    await q.query(`ALTER TABLE webhook_deliveries ADD PRIMARY KEY (id)`);
    await q.query(`ALTER TABLE webhook_deliveries ADD UNIQUE (event_id, webhook_id)`);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE`,
    );
    await q.query(`ALTER TABLE webhook_deliveries ADD FOREIGN KEY (event_id) REFERENCES outbox_events (id)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_stats ON webhook_deliveries (webhook_id, created_at, id) INCLUDE (status, attempt_count)`,
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
      `CREATE TABLE webhook_delivery_attempts (LIKE webhook_delivery_attempts_p INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)`,
    );
    await q.query(
      `INSERT INTO webhook_delivery_attempts SELECT * FROM webhook_delivery_attempts_p a WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)`,
    );
    await q.query(`ALTER TABLE webhook_delivery_attempts DROP COLUMN delivery_finished_at`);
    await q.query(`ALTER SEQUENCE webhook_delivery_attempts_id_seq OWNED BY webhook_delivery_attempts.id`);
    await q.query(`ALTER TABLE webhook_delivery_attempts ADD PRIMARY KEY (id)`);
    await q.query(
      `ALTER TABLE webhook_delivery_attempts ADD FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE`,
    );
    await q.query(`CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, number)`);
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_ok ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NULL`,
    );
    await q.query(
      `CREATE INDEX webhook_delivery_attempts_failed ON webhook_delivery_attempts (webhook_id, started_at) INCLUDE (duration_ms) WHERE error IS NOT NULL`,
    );
    for (const t of ['webhook_delivery_attempts', 'webhook_deliveries', 'outbox_events'])
      await q.query(`DROP TABLE ${t}_p`);
  }
}

/**
 * Creates the missing day partitions of the three log tables for [from_day, to_day] (UTC days) and returns
 * how many it made. A day whose rows already sit in a table's default partition is left to it: attaching
 * a partition over them would fail. Each partition is created apart and then attached, which locks the
 * parent only in SHARE UPDATE EXCLUSIVE mode (reads and writes go on). Used by this migration and by the
 * workers' retention pass, which keeps a few days ahead.
 */
export const ENSURE_PARTITIONS_BY_FINISH = `
CREATE FUNCTION delivery_log_ensure_partitions(from_day date, to_day date) RETURNS integer LANGUAGE plpgsql AS $$
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
      col := CASE t WHEN 'outbox_events' THEN 'occurred_at' WHEN 'webhook_deliveries' THEN 'finished_at' ELSE 'delivery_finished_at' END;
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', t || '_default', col, col) INTO taken USING lo, hi;
      CONTINUE WHEN taken;
      EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)', part, t);
      EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', t, part, lo, hi);
      made := made + 1;
    END LOOP;
  END LOOP;
  RETURN made;
END $$`;
