import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import {
  claimSql,
  DELIVERY_LOG_SQL,
  EVENT_TRACES_SQL,
  NEXT_IN_ORDER_SQL,
  OLDEST_OVERDUE_SQL,
  OLDEST_PENDING_SQL,
  OVERDUE_SQL,
  PENDING_READ_WHOLE,
  RATE_LIMITED_SQL,
  recordSql,
} from '../../src/webhooks/delivery.store';
import { OLDEST_UNRELAYED_SQL } from '../../src/events/outbox.store';
import { useTestEnv } from '../helpers/use-service';

// the hot statements through the partitioned tables (as for a day whose partition is not known yet)
const CLAIM_SQL = claimSql('webhook_deliveries', 'outbox_events');
const RECORD_SQL = recordSql('webhook_deliveries', 'webhook_delivery_attempts');

/**
 * The delivery log's statements at scale: a month of deliveries built with SQL (generate_series), ANALYZEd,
 * then every log route's statement (and the reconciler's scan) is EXPLAINed, with the plan Postgres makes
 * for the given values and the generic plan a prepared statement may switch to: none may read a big
 * partition sequentially. `npm test` builds DELIVERY_LOG_ATTEMPTS = 200 000 attempts (the same shape and
 * per-partition statistics as a larger log, with fewer rows per day); `npm run log-scale` runs this spec at
 * 10 000 000 attempts.
 */
const ATTEMPTS = Number(process.env.DELIVERY_LOG_ATTEMPTS ?? 200_000);
// per 100 deliveries: 90 delivered (1 attempt), 8 failed (3 attempts), 2 pending (1 attempt) = 116 attempts
const DELIVERIES = Math.round((ATTEMPTS * 100) / 116);
const WEBHOOKS = 50;
const DAYS = 30;
/** The last second of yesterday (UTC), where the built log ends: today's partition starts empty. */
const YESTERDAY_END = `(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 second')`;
/** A sequential scan of a partition with more rows than this fails the check (tiny partitions may be scanned). */
const BIG = 5_000;

const uuid = (prefix: string, expr: string) => `('${prefix}' || lpad(to_hex(${expr}), 12, '0'))::uuid`;

describe(`delivery log at ${ATTEMPTS.toLocaleString('en')} attempts`, () => {
  const env = useTestEnv();
  let db: Client;
  const figures: string[] = [];

  beforeAll(async () => {
    db = await env.client();
    const started = Date.now();
    await db.query(
      `SELECT delivery_log_ensure_partitions((now() AT TIME ZONE 'UTC')::date - ${DAYS + 1}, (now() AT TIME ZONE 'UTC')::date)`,
    );
    await db.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at)
       SELECT ${uuid('00000000-0000-4000-8000-', 'i')}, 'w' || i, 'https://example.com/' || i, ARRAY['AccessRequestApproved'], 'x', now() - interval '60 days'
         FROM generate_series(1, ${WEBHOOKS}) i`,
    );
    // delivery i belongs to event i/2 and webhook i % WEBHOOKS; created evenly over the DAYS whole days before today,
    // so every day's partition holds as many: counted back from now, the oldest day's would hold only the part of a
    // day after the current time of day, and near midnight so few rows that Postgres rightly reads it whole
    await db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at)
       SELECT ${uuid('00000000-0000-4000-9000-', 'e')}, 'AccessRequestApproved', '{"ID":1}', t, t
         FROM (SELECT e, ${YESTERDAY_END} - (e * 2.0 / ${DELIVERIES}) * interval '${DAYS} days' AS t FROM generate_series(0, ${Math.ceil(DELIVERIES / 2)}) e) s`,
    );
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, created_at, updated_at, event_occurred_at)
       SELECT ${uuid('00000000-0000-4000-a000-', 'i')}, ${uuid('00000000-0000-4000-8000-', `i % ${WEBHOOKS} + 1`)}, ${uuid('00000000-0000-4000-9000-', 'i / 2')},
              'AccessRequestApproved', st, CASE st WHEN 'failed' THEN 3 ELSE 1 END, CASE WHEN st = 'pending' THEN t + interval '5 minutes' END,
              t, t, t
         FROM (SELECT i, ${YESTERDAY_END} - (i::float8 / ${DELIVERIES}) * interval '${DAYS} days' AS t,
                      CASE WHEN i % 100 < 2 THEN 'pending' WHEN i % 100 < 10 THEN 'failed' ELSE 'delivered' END AS st
                 FROM generate_series(0, ${DELIVERIES - 1}) i) s`,
    );
    await db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, trigger, event_occurred_at)
       SELECT d.id, d.webhook_id, n, d.created_at, CASE d.status WHEN 'failed' THEN 500 ELSE 200 END, 12, CASE d.status WHEN 'failed' THEN 'http_status' END, 'ok', 'scheduled', d.event_occurred_at
         FROM webhook_deliveries d, generate_series(1, d.attempt_count) n`,
    );
    await db.query(`ANALYZE outbox_events, webhook_deliveries, webhook_delivery_attempts`);
    const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts`)).rows;
    figures.push(`built ${n} attempts, ${DELIVERIES} deliveries in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(n).toBeGreaterThanOrEqual(ATTEMPTS * 0.98);
  }, 3_600_000);

  afterAll(() => process.stderr.write(`\ndelivery log scale:\n  ${figures.join('\n  ')}\n`));

  /**
   * Sequential scans of partitions holding more than BIG rows, in the plan Postgres makes for these values, and in the
   * generic plan.
   */
  async function seqScans(
    sql: string,
    params: unknown[],
  ): Promise<{ custom: string[]; generic: string[]; ms: number }> {
    const big = new Set(
      (
        await db.query(
          `SELECT relname FROM pg_class WHERE relkind = 'r' AND reltuples > ${BIG} AND relname ~ '^(outbox_events|webhook_deliveries|webhook_delivery_attempts)_'`,
        )
      ).rows.map((r) => r.relname),
    );
    const scans = (plan: any): string[] => {
      const own = plan['Node Type'] === 'Seq Scan' && big.has(plan['Relation Name']) ? [plan['Relation Name']] : [];
      return own.concat(...(plan.Plans ?? []).map(scans));
    };
    const analyzed = (await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'][0];
    await db.query(`SET plan_cache_mode = force_generic_plan`);
    try {
      await db.query(`PREPARE scale_check AS ${sql}`);
      const values = params.length ? `(${params.map((v) => db.escapeLiteral(String(v))).join(', ')})` : '';
      const generic = (await db.query(`EXPLAIN (FORMAT JSON) EXECUTE scale_check${values}`)).rows[0]['QUERY PLAN'][0];
      return { custom: scans(analyzed.Plan), generic: scans(generic.Plan), ms: analyzed['Execution Time'] };
    } finally {
      await db.query(`DEALLOCATE ALL`);
      await db.query(`RESET plan_cache_mode`);
    }
  }

  async function check(what: string, sql: string, params: unknown[]): Promise<void> {
    const r = await seqScans(sql, params);
    figures.push(`${what}: ${r.ms.toFixed(2)} ms`);
    expect({ what, sequentialScans: r.custom }).toEqual({ what, sequentialScans: [] });
    expect({ what, genericPlanSequentialScans: r.generic }).toEqual({ what, genericPlanSequentialScans: [] });
  }

  const webhook = `00000000-0000-4000-8000-${(7).toString(16).padStart(12, '0')}`;

  it('lists a webhook’s deliveries, newest first, first and a later page, also by status, from the indexes', async () => {
    await check('list page 1', DELIVERY_LOG_SQL.list, [webhook, 20, 0]);
    await check('list page 50', DELIVERY_LOG_SQL.list, [webhook, 20, 980]);
    for (const status of ['delivered', 'failed', 'pending'])
      await check(`list ${status}`, DELIVERY_LOG_SQL.byStatus[status], [webhook, 20, 0]);
  });

  it('reads one delivery and its attempts from one partition', async () => {
    // a failed delivery (3 attempts) from the middle of the month
    const i = Math.floor(DELIVERIES / 2 / 100) * 100 + 5;
    const id = `00000000-0000-4000-a000-${i.toString(16).padStart(12, '0')}`;
    const owner = `00000000-0000-4000-8000-${((i % WEBHOOKS) + 1).toString(16).padStart(12, '0')}`;
    await check('one delivery', DELIVERY_LOG_SQL.one, [id, owner]);
    const [d] = (await db.query(DELIVERY_LOG_SQL.one, [id, owner])).rows;
    expect(d.status).toBe('failed');
    await check('its attempts', DELIVERY_LOG_SQL.attempts, [id, d.at]);
    expect((await db.query(DELIVERY_LOG_SQL.attempts, [id, d.at])).rows).toHaveLength(3);
    const plan = (await db.query(`EXPLAIN (FORMAT JSON) ${DELIVERY_LOG_SQL.attempts}`, [id, d.at])).rows[0][
      'QUERY PLAN'
    ][0];
    expect(JSON.stringify(plan)).not.toMatch(/"Node Type":"Append"/); // pruned to the one partition
  });

  /**
   * The rows the scans of an analyzed plan read (returned, or thrown away by their filters), over all loops; a scan
   * of a subquery's or a CTE's result reads no table.
   */
  const rowsRead = (node: any): number =>
    (/Scan$/.test(node['Node Type']) && !/^(Subquery|CTE) Scan$/.test(node['Node Type'])
      ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1)
      : 0) + (node.Plans ?? []).reduce((sum: number, child: any) => sum + rowsRead(child), 0);
  const analyzed = async (sql: string, params: unknown[] = []) =>
    (await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN'][0].Plan;

  /** The partitions of `table` an analyzed plan read (nodes that ran; pruned and unused ones did not). */
  const partitionsRead = (plan: any, table: string): string[] => {
    const read = new Set<string>();
    const walk = (node: any) => {
      const name: string | undefined = node['Relation Name'];
      if (name?.startsWith(`${table}_`) && node['Actual Loops'] > 0) read.add(name);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan.Plan);
    return [...read];
  };

  it('pages a few pending deliveries behind another webhook’s backlog from their own index entries', async () => {
    const few = '00000000-0000-4000-8000-0000000f0001';
    const backlog = '00000000-0000-4000-8000-0000000f0002';
    const BACKLOG = 20_000;
    await db.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted) VALUES
         ($1, 'few', 'https://example.com/few', ARRAY['AccessRequestApproved'], 'x'),
         ($2, 'backlog', 'https://example.com/backlog', ARRAY['AccessRequestApproved'], 'x')`,
      [few, backlog],
    );
    try {
      // three pending deliveries from twenty days ago among two thousand delivered ones; a newer backlog elsewhere,
      // in one day's partition whatever the time (counted back from now, just after midnight it spanned two)
      await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at,
                                         created_at, updated_at, event_occurred_at)
         SELECT gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved', st,
                1, CASE WHEN st = 'pending' THEN now() + interval '1 hour' END, t, t, t
           FROM (SELECT CASE WHEN i <= 3 THEN 'pending' ELSE 'delivered' END AS st,
                        now() - interval '20 days' + i * interval '10 minutes' AS t FROM generate_series(1, 2000) i) s`,
        [few],
      );
      await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at,
                                         created_at, updated_at, event_occurred_at)
         SELECT gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved', 'pending', 0,
                now() + interval '1 hour', t, t, t
           FROM (SELECT ${YESTERDAY_END} - i * interval '100 ms' AS t FROM generate_series(1, $2::int) i) s`,
        [backlog, BACKLOG],
      );
      await db.query(`ANALYZE webhook_deliveries`);
      // what the page must be: the plain newest-first statement's answer
      const expected = async (id: string, skip: number) =>
        (
          await db.query(
            `SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'
              ORDER BY created_at DESC, id DESC LIMIT 20 OFFSET $2`,
            [id, skip],
          )
        ).rows.map((r) => r.id);
      const page = async (id: string, skip: number) =>
        (await db.query(DELIVERY_LOG_SQL.byStatus.pending, [id, 20, skip])).rows.map((r) => r.id);

      expect(await page(few, 0)).toEqual(await expected(few, 0));
      expect(await page(few, 0)).toHaveLength(3);
      expect(await page(few, 20)).toEqual([]);
      const PLAIN = `SELECT * FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending'
                      ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`;
      const fewRead = rowsRead(await analyzed(DELIVERY_LOG_SQL.byStatus.pending, [few, 20, 0]));
      const fewPlain = rowsRead(await analyzed(PLAIN, [few, 20, 0]));
      figures.push(`3 pending behind a backlog of ${BACKLOG}: ${fewRead} rows read (the plain walk: ${fewPlain})`);
      // (the plain newest-first statement walks the webhook's history or the other webhook's backlog, as the
      // planner guesses: here 1 700 or 20 000 rows)
      expect(fewRead).toBeLessThan(50);

      // past PENDING_READ_WHOLE, the newest-first walk: what it read before, and the count's entries
      for (const skip of [0, 40]) expect(await page(backlog, skip)).toEqual(await expected(backlog, skip));
      const backlogRead = rowsRead(await analyzed(DELIVERY_LOG_SQL.byStatus.pending, [backlog, 20, 40]));
      const backlogPlain = rowsRead(await analyzed(PLAIN, [backlog, 20, 40]));
      figures.push(`a page of a backlog of ${BACKLOG}: ${backlogRead} rows read (the plain walk: ${backlogPlain})`);
      expect(backlogRead).toBeLessThanOrEqual(backlogPlain + PENDING_READ_WHOLE + 1);
      await check('list pending, few behind a backlog', DELIVERY_LOG_SQL.byStatus.pending, [few, 20, 0]);
      await check('list pending, a backlog', DELIVERY_LOG_SQL.byStatus.pending, [backlog, 20, 0]);
    } finally {
      await db.query(`DELETE FROM webhook_deliveries WHERE webhook_id IN ($1, $2)`, [few, backlog]);
      await db.query(`DELETE FROM webhooks WHERE id IN ($1, $2)`, [few, backlog]);
      await db.query(`ANALYZE webhook_deliveries`);
    }
  });

  it('the reconciler’s scan reads pending deliveries from the partial index of each partition', async () => {
    await check('overdue scan', OVERDUE_SQL, [3, 2000]);
    // then the trace contexts of the events of what it found, in one statement that reads only their days
    const overdue = (await db.query(OVERDUE_SQL, [3, 2000])).rows;
    expect(overdue.length).toBeGreaterThan(0);
    await check('event traces of the overdue', EVENT_TRACES_SQL, [
      `{${overdue.map((r) => r.event_id).join(',')}}`,
      `{${overdue.map((r) => `"${r.at}"`).join(',')}}`,
    ]);
  });

  it('the reconciler’s scan takes an ordered webhook’s head alone, and reads none of the rows behind it', async () => {
    // an ordered webhook blocked behind its head, 20 000 deliveries waiting behind it (each released by the claim
    // that found it was not the head: held 'order'), all due before any other overdue delivery of the log (rolled back)
    const blocked = `00000000-0000-4000-8000-${(9).toString(16).padStart(12, '0')}`;
    const BEHIND = 20_000;
    await db.query('BEGIN');
    try {
      await db.query(`UPDATE webhooks SET ordered = true WHERE id = $1`, [blocked]);
      await db.query(
        `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at)
         SELECT ${uuid('00000000-0000-4000-b000-', 'i')}, 'AccessRequestApproved', '{"ID":1}', now() - interval '1 day', now()
           FROM generate_series(1, ${BEHIND}) i`,
      );
      await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, created_at, updated_at, event_occurred_at, event_seq, held)
         SELECT ${uuid('00000000-0000-4000-c000-', 'i')}, $1, ${uuid('00000000-0000-4000-b000-', 'i')}, 'AccessRequestApproved', 'pending',
                0, now() - interval '60 days', now(), now(), now() - interval '1 day', i, CASE WHEN i > 1 THEN 'order' END
           FROM generate_series(1, ${BEHIND}) i`,
        [blocked],
      );
      // as each delivery of it finishes, the worker asks for the next in order: one index probe a partition, not a
      // sort of the backlog (a backlog of N then cost N² to drain)
      expect(rowsRead(await analyzed(NEXT_IN_ORDER_SQL, [blocked]))).toBeLessThan(DAYS * 2);
      expect((await db.query(NEXT_IN_ORDER_SQL, [blocked])).rows.map((r) => r.id)).toEqual([
        `00000000-0000-4000-c000-${(1).toString(16).padStart(12, '0')}`,
      ]);
      const rows = (await db.query(OVERDUE_SQL, [3, 2000])).rows.filter((r) => r.webhook_id === blocked);
      expect(rows.map((r) => r.id)).toEqual([`00000000-0000-4000-c000-${(1).toString(16).padStart(12, '0')}`]);
      const [{ age }] = (await db.query(OLDEST_OVERDUE_SQL)).rows;
      expect(age).toBeGreaterThanOrEqual(3600);
      const scans: [string, unknown[], number][] = [
        [OVERDUE_SQL, [3, 2000], 2000],
        [OLDEST_OVERDUE_SQL, [], 1],
      ];
      for (const [sql, params, limit] of scans) {
        const plan = JSON.stringify((await db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN']);
        // a subquery run per delivery row (NOT EXISTS an older pending one) made this backlog cost its square
        expect(plan).not.toContain('"Parent Relationship":"SubPlan"');
        // the due index in due order up to the limit, and a probe a partition for each ordered webhook's head: the
        // backlog, due before everything else, is not in that index (it was read, and thrown away, row by row)
        expect(rowsRead(await analyzed(sql, params))).toBeLessThan(limit + WEBHOOKS * (DAYS + 2));
      }
    } finally {
      await db.query('ROLLBACK');
    }
  });

  it('the gauges of a stalled dispatch read the partial indexes, never a big partition whole', async () => {
    await check('most overdue delivery', OLDEST_OVERDUE_SQL, []);
    const [overdue] = (await db.query(OLDEST_OVERDUE_SQL)).rows;
    expect(overdue.age).toBeGreaterThan(0);
    await check('oldest unrelayed event', OLDEST_UNRELAYED_SQL, []);
  });

  it('the gauges of the backlog read only a few index entries a partition, not every pending delivery', async () => {
    await check('oldest pending delivery', OLDEST_PENDING_SQL, []);
    expect(rowsRead(await analyzed(OLDEST_PENDING_SQL))).toBeLessThan(DAYS * 2);
    const [pending] = (await db.query(OLDEST_PENDING_SQL)).rows;
    expect(pending.age).toBeGreaterThan((DAYS - 1) * 86_400);

    // ten deliveries waiting for their webhook's rate limit (rolled back)
    await db.query('BEGIN');
    try {
      await db.query(
        `UPDATE webhook_deliveries SET held = 'rate_limit'
          WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' ORDER BY id LIMIT 10)`,
      );
      await check('rate-limited deliveries', RATE_LIMITED_SQL, []);
      expect((await db.query(RATE_LIMITED_SQL)).rows).toEqual([{ n: 10 }]);
      expect(rowsRead(await analyzed(RATE_LIMITED_SQL))).toBeLessThanOrEqual(10);
    } finally {
      await db.query('ROLLBACK');
    }
  });

  it('claims and records a delivery in its one partition: the hot statements read nothing else', async () => {
    // a pending delivery from the middle of the month
    const i = Math.floor(DELIVERIES / 2 / 100) * 100 + 1;
    const id = `00000000-0000-4000-a000-${i.toString(16).padStart(12, '0')}`;
    const [d] = (
      await db.query(`SELECT event_occurred_at::text AS at, status, webhook_id FROM webhook_deliveries WHERE id = $1`, [
        id,
      ])
    ).rows;
    expect(d.status).toBe('pending');
    await db.query('BEGIN');
    try {
      await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [id]);
      const claim = (
        await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${CLAIM_SQL}`, [[id], [d.at], randomUUID()])
      ).rows[0]['QUERY PLAN'][0];
      figures.push(`claim: ${claim['Execution Time'].toFixed(2)} ms`);
      expect(partitionsRead(claim, 'webhook_deliveries')).toEqual([`webhook_deliveries_${partitionOf(d.at)}`]);
      expect(partitionsRead(claim, 'outbox_events')).toEqual([`outbox_events_${partitionOf(d.at)}`]);
      const [lease] = (await db.query(`SELECT locked_until::text AS lease FROM webhook_deliveries WHERE id = $1`, [id]))
        .rows;
      const record = (
        await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${RECORD_SQL}`, [
          [id],
          [d.at],
          [2],
          [new Date()],
          [200],
          [5],
          [null],
          ['ok'],
          ['scheduled'],
          ['delivered'],
          [null],
          [lease.lease],
          [d.webhook_id],
        ])
      ).rows[0]['QUERY PLAN'][0];
      figures.push(`record: ${record['Execution Time'].toFixed(2)} ms`);
      expect(partitionsRead(record, 'webhook_deliveries')).toEqual([`webhook_deliveries_${partitionOf(d.at)}`]);
    } finally {
      await db.query('ROLLBACK');
    }
  });
});

/** The day partition suffix (pYYYYMMDD) of a partition key as Postgres writes it. */
function partitionOf(at: string): string {
  return `p${new Date(at.replace(' ', 'T').replace(/\+00$/, 'Z')).toISOString().slice(0, 10).replace(/-/g, '')}`;
}
