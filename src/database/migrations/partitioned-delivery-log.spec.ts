import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { PartitionedDeliveryLog1763801400000 } from './1763801400000-partitioned-delivery-log';
import { DeliveryLogByEventTime1763801500000 } from './1763801500000-delivery-log-by-event-time';

const LOG_TABLES = ['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts'];

// Upgrading a database with a delivery log: every row and every column value is kept, and the partitioned
// tables have every column, default, check and index the plain ones had.
describe('migration PartitionedDeliveryLog', () => {
  const fixture = useDataSource();
  const migration = new PartitionedDeliveryLog1763801400000();
  const byEventTime = new DeliveryLogByEventTime1763801500000();
  // every statement on one connection, in one transaction rolled back at the end
  let runner: QueryRunner;

  // The log is taken back to before PartitionedDeliveryLog (and the later DeliveryLogByEventTime) once, for both tests.
  beforeAll(async () => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({
      close: async () => {
        if (r.isTransactionActive) await r.rollbackTransaction();
        await r.release();
      },
    });
    await r.startTransaction();
    await byEventTime.down(r);
    await migration.down(r);
    await r.query('SAVEPOINT before_log');
  });

  const columns = async (): Promise<string[]> =>
    (
      await runner.query(
        `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '-') AS c
           FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY($1) ORDER BY 1`,
        [LOG_TABLES],
      )
    ).map((r: { c: string }) => r.c);
  const indexes = async (): Promise<string[]> =>
    (
      await runner.query(
        // the definition without the index's own name, which the old table's copy of it does not keep
        `SELECT regexp_replace(pg_get_indexdef(i.indexrelid), '^CREATE (UNIQUE )?INDEX \\S+ ON (ONLY )?', '\\1') AS d
           FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = ANY($1) ORDER BY 1`,
        [LOG_TABLES],
      )
    ).map((r: { d: string }) => r.d);
  const checks = async (): Promise<string[]> =>
    (
      await runner.query(
        `SELECT t.relname || ' ' || pg_get_constraintdef(c.oid) AS d FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
          WHERE t.relname = ANY($1) AND c.contype = 'c' ORDER BY 1`,
        [LOG_TABLES],
      )
    ).map((r: { d: string }) => r.d);

  /** The days `table` has partitions for (YYYYMMDD), in order. */
  const partitionDays = async (table: string): Promise<string[]> =>
    (
      await runner.query(
        `SELECT right(c.relname, 8) AS d FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent = $1::regclass AND c.relname ~ '_p[0-9]{8}$' ORDER BY 1`,
        [table],
      )
    ).map((r: { d: string }) => r.d);
  /** The UTC days from `from` to `to` days from today (YYYYMMDD), in order. */
  const utcDays = async (from: number, to: number): Promise<string[]> =>
    (
      await runner.query(
        `SELECT to_char(d, 'YYYYMMDD') AS d
           FROM generate_series((now() AT TIME ZONE 'UTC')::date + $1::int, (now() AT TIME ZONE 'UTC')::date + $2::int,
                                interval '1 day') d ORDER BY 1`,
        [from, to],
      )
    ).map((r: { d: string }) => r.d);

  /** Runs `between` (which runs PartitionedDeliveryLog's up) on the log as it was before, then takes it back there. */
  async function fromBefore(between: () => Promise<void>): Promise<void> {
    try {
      await between();
    } finally {
      await runner.query('ROLLBACK TO SAVEPOINT before_log');
    }
  }

  it('makes a fresh log only the days the workers keep ready (yesterday to three ahead), not thirty empty ones', async () => {
    await fromBefore(async () => {
      await migration.up(runner);
      await byEventTime.up(runner);
      const expected = await utcDays(-1, 3);
      for (const table of LOG_TABLES) expect([table, await partitionDays(table)]).toEqual([table, expected]);
    });
  });

  it('keeps every row, column value, default, check and index of the log; pending work lands in the open partitions', async () => {
    await fromBefore(async () => {
      const [cols, idx, chk] = [await columns(), await indexes(), await checks()];
      expect(cols.join('\n')).toMatch(/outbox_events\.seq bigint YES nextval\('outbox_events_seq'::regclass\)/);

      const webhook = randomUUID();
      await runner.query(
        `INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at) VALUES ($1, 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x', now() - interval '60 days')`,
        [webhook],
      );
      const [recent, done, old, test] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      await runner.query(
        `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at, trace_context, target_webhook_id) VALUES
           ($1, 'AccessRequestApproved', '{"ID":1}', now() - interval '2 days', now() - interval '2 days', '{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}', NULL),
           ($2, 'AccessRequestApproved', '{"ID":2}', now() - interval '2 days', now() - interval '2 days', NULL, NULL),
           ($3, 'AccessRequestApproved', '{"ID":3}', now() - interval '40 days', now() - interval '40 days', NULL, NULL),
           ($4, 'WebhookTest', '{}', now(), NULL, NULL, $5)`,
        [recent, done, old, test, webhook],
      );
      const [pending, delivered, ancient] = [randomUUID(), randomUUID(), randomUUID()];
      await runner.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, created_at, updated_at, event_seq, held) VALUES
           ($1, $4, $5, 'AccessRequestApproved', 'pending', 1, now() + interval '1 minute', now() - interval '2 days', now() - interval '1 day', 7, 'rate_limit'),
           ($2, $4, $6, 'AccessRequestApproved', 'delivered', 1, NULL, now() - interval '2 days', now() - interval '2 days', 8, NULL),
           ($3, $4, $7, 'AccessRequestApproved', 'failed', 1, NULL, now() - interval '40 days', now() - interval '40 days', NULL, NULL)`,
        [pending, delivered, ancient, webhook, recent, done, old],
      );
      await runner.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, trigger) VALUES
           ($1, $4, 1, now() - interval '2 days', 503, 10, 'http_status', 'busy', 'scheduled'),
           ($2, $4, 1, now() - interval '2 days', 200, 11, NULL, 'ok', 'scheduled'),
           ($3, $4, 1, now() - interval '40 days', 500, 12, 'http_status', 'no', 'scheduled')`,
        [pending, delivered, ancient, webhook],
      );
      const before = {
        events: await runner.query(
          `SELECT id, name, payload, occurred_at, relayed_at, trace_context, target_webhook_id, seq FROM outbox_events ORDER BY id`,
        ),
        deliveries: await runner.query(
          `SELECT id, webhook_id, event_id, status, attempt_count, next_attempt_at, event_seq, held, created_at, updated_at FROM webhook_deliveries ORDER BY id`,
        ),
        attempts: await runner.query(
          `SELECT id, delivery_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, trigger FROM webhook_delivery_attempts ORDER BY id`,
        ),
      };
      const maxSeq = Math.max(...before.events.map((e: { seq: string }) => Number(e.seq)));

      await migration.up(runner);

      // the same columns (plus the partition keys), defaults and checks, and every index (plus the status one)
      const added = ['webhook_deliveries.finished_at', 'webhook_delivery_attempts.delivery_finished_at'];
      expect((await columns()).filter((c) => !added.some((a) => c.startsWith(a + ' ')))).toEqual(cols);
      expect(await checks()).toEqual(chk);
      const after = await indexes();
      for (const d of idx.filter((d) => !/^UNIQUE .*USING btree \((id|event_id, webhook_id)\)$/.test(d)))
        expect(after).toContain(d);
      expect(after).toEqual(
        expect.arrayContaining([
          'UNIQUE public.outbox_events USING btree (id, occurred_at)',
          'UNIQUE public.webhook_deliveries USING btree (id, finished_at)',
          'UNIQUE public.webhook_deliveries USING btree (event_id, webhook_id, finished_at)',
          'UNIQUE public.webhook_delivery_attempts USING btree (id, delivery_finished_at)',
        ]),
      );
      const kinds = await runner.query(
        `SELECT relname, relkind FROM pg_class WHERE relname = ANY($1) ORDER BY relname`,
        [LOG_TABLES],
      );
      expect(kinds.map((k: { relkind: string }) => k.relkind)).toEqual(['p', 'p', 'p']);

      // every row and value kept
      expect(
        await runner.query(
          `SELECT id, name, payload, occurred_at, relayed_at, trace_context, target_webhook_id, seq FROM outbox_events ORDER BY id`,
        ),
      ).toEqual(before.events);
      expect(
        await runner.query(
          `SELECT id, webhook_id, event_id, status, attempt_count, next_attempt_at, event_seq, held, created_at, updated_at FROM webhook_deliveries ORDER BY id`,
        ),
      ).toEqual(before.deliveries);
      expect(
        await runner.query(
          `SELECT id, delivery_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, trigger FROM webhook_delivery_attempts ORDER BY id`,
        ),
      ).toEqual(before.attempts);
      const part = async (table: string, idColumn: string, id: string) =>
        (await runner.query(`SELECT tableoid::regclass::text AS p FROM ${table} WHERE ${idColumn} = $1`, [id]))[0].p;
      expect(await part('webhook_deliveries', 'id', pending)).toBe('webhook_deliveries_open');
      expect(await part('webhook_delivery_attempts', 'delivery_id', pending)).toBe('webhook_delivery_attempts_open');
      expect(await part('webhook_deliveries', 'id', delivered)).toMatch(/^webhook_deliveries_p\d{8}$/);
      expect(await part('webhook_deliveries', 'id', ancient)).toBe('webhook_deliveries_default');
      // days back to the oldest row carried over (40 days ago), within the default retention of 30
      const expected = await utcDays(-30, 3);
      for (const table of LOG_TABLES) expect([table, await partitionDays(table)]).toEqual([table, expected]);

      // the event order goes on from where it was; the relay's conflict target still exists
      const [next] = await runner.query(
        `INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES ($1, 'AccessRequestApproved', '{}', now()) RETURNING seq`,
        [randomUUID()],
      );
      expect(Number(next.seq)).toBeGreaterThan(maxSeq);
      const relayed = await runner.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name) VALUES ($1, $2, $3, 'AccessRequestApproved')
         ON CONFLICT (event_id, webhook_id, finished_at) DO NOTHING RETURNING id`,
        [randomUUID(), webhook, recent],
      );
      expect(relayed).toEqual([]); // its pending delivery to this webhook exists already

      // deleting the webhook takes its deliveries and their attempts, in every partition
      await runner.query(`DELETE FROM webhooks WHERE id = $1`, [webhook]);
      expect(
        (
          await runner.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE webhook_id = $1`, [
            webhook,
          ])
        )[0].n,
      ).toBe(0);
      expect(
        (await runner.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [webhook]))[0].n,
      ).toBe(0);
    });
  });
});
