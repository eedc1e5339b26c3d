import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source';
import { DayPartitions } from '../../src/database/day-partitions';
import { KEYED_PLANNING, Sql } from '../../src/database/sql';
import { claimSql, DeliveryStore, keyText } from '../../src/webhooks/delivery.store';
import { useDataSource } from '../helpers/use-service';

const EVENT = '00000000-0000-4000-9000-000000000001';
/** Deliveries in the day partition when it is first analyzed: a day's first minute. */
const EARLY = 60;
/** Deliveries it holds later the same day, before its next analyze. */
const LATER = 5_000;

/**
 * The worker's claims and records run on connections of their own (Sql.keyed) that plan each statement once,
 * generically, and never by reading a whole table. The hazard they avoid: a generic plan of the claim made
 * while the day's partition holds a few analyzed rows reads the partition whole, and keeps doing so while the
 * partition grows, until the next analyze. Keyed connections plan it by the primary key at any size.
 */
describe('the keyed connections of the claims and records', () => {
  const f = useDataSource();
  let day: string;
  let text: string;

  /** The partition scans of the claim's plan, as EXPLAIN EXECUTE of the prepared statement shows it. */
  const claimScans = async (db: Client): Promise<string[]> => {
    const [plan] = (
      await db.query(
        `EXPLAIN (FORMAT JSON) EXECUTE claim('{00000000-0000-4000-8000-000000000001}', '{${day}}', '00000000-0000-4000-8000-000000000002')`,
      )
    ).rows[0]['QUERY PLAN'];
    const scans: string[] = [];
    const walk = (node: any): void => {
      if (node['Relation Name'] === `webhook_deliveries_${partition(day)}` && /Scan$/.test(node['Node Type']))
        scans.push(node['Node Type']);
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan.Plan);
    return scans;
  };

  const connect = async (options: string): Promise<Client> => {
    const db = new Client({ connectionString: f.env.databaseUrl, options });
    await db.connect();
    f.adopt({ close: () => db.end() });
    await db.query(`PREPARE claim(uuid[], timestamptz[], uuid) AS ${text}`);
    return db;
  };

  beforeAll(async () => {
    // a day of its own, in the future: its partitions are new and empty
    day = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    await f.sql.query(`SELECT delivery_log_ensure_partitions($1::date, $1::date)`, [day]);
    text = claimSql(`webhook_deliveries_${partition(day)}`, `outbox_events_${partition(day)}`);
    await f.sql.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at)
       SELECT gen_random_uuid(), 'w' || i, 'https://example.com/' || i, ARRAY['AccessRequestApproved'], 'x', now() - interval '1 day'
         FROM generate_series(1, $1::int) i`,
      [EARLY],
    );
    await f.sql.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES ($1, 'AccessRequestApproved', '{"ID":1}', $2::date)`,
      [EVENT, day],
    );
    await f.sql.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, event_occurred_at)
       SELECT gen_random_uuid(), w.id, $1, 'AccessRequestApproved', 'delivered', 1, NULL, $2::date FROM webhooks w`,
      [EVENT, day],
    );
    await f.sql.query(`ANALYZE webhook_deliveries_${partition(day)}`, []);
  });

  it('are connections that plan generically and never by sequential scan', async () => {
    const [row] = await f.sql.keyed<{ seqscan: string; mode: string }>(
      `SELECT current_setting('enable_seqscan') AS seqscan, current_setting('plan_cache_mode') AS mode, $1::int AS one`,
      [1],
    );
    expect(row).toMatchObject({ seqscan: 'off', mode: 'force_generic_plan' });
  });

  it('keep those settings when DATABASE_URL sets startup options of its own', async () => {
    const url = new URL(f.env.databaseUrl);
    url.searchParams.set('options', '-c enable_seqscan=on -c plan_cache_mode=auto');
    const db = new DataSource(dataSourceOptions(url.toString()));
    await db.initialize();
    const sql = new Sql(db);
    try {
      const [row] = await sql.keyed<{ seqscan: string; mode: string }>(
        `SELECT current_setting('enable_seqscan') AS seqscan, current_setting('plan_cache_mode') AS mode, $1::int AS one`,
        [1],
      );
      expect(row).toMatchObject({ seqscan: 'off', mode: 'force_generic_plan' });
      // the app's own pool keeps what the URL asked for
      const [own] = await sql.query<{ seqscan: string }>(
        `SELECT current_setting('enable_seqscan') AS seqscan, $1::int`,
        [1],
      );
      expect(own.seqscan).toBe('on');
    } finally {
      await sql.onApplicationShutdown();
      await db.destroy();
    }
  });

  it('plan the claim by key where a generic plan would read the partition whole, and keep that plan as it grows', async () => {
    // the hazard: a generic plan made on the early, analyzed partition
    const plain = await connect('-c plan_cache_mode=force_generic_plan');
    expect(await claimScans(plain)).toEqual(['Seq Scan']);

    const keyed = await connect(
      Object.entries(KEYED_PLANNING)
        .map(([name, value]) => `-c ${name}=${value}`)
        .join(' '),
    );
    const early = await claimScans(keyed);
    expect(early.length).toBeGreaterThan(0);
    expect(early).not.toContain('Seq Scan');

    // the same day, many deliveries later, before the partition's next analyze
    await f.sql.query(
      `WITH e AS (
         INSERT INTO outbox_events (id, name, payload, occurred_at)
         SELECT gen_random_uuid(), 'AccessRequestApproved', '{"ID":1}', $1::date FROM generate_series(1, $2::int)
         RETURNING id)
       INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, next_attempt_at, event_occurred_at)
       SELECT gen_random_uuid(), (SELECT id FROM webhooks ORDER BY name LIMIT 1), e.id, 'AccessRequestApproved', now(), $1::date FROM e`,
      [day, LATER],
    );
    expect(await claimScans(keyed)).toEqual(early);
  });

  it('claim a pending delivery of that day through the store', async () => {
    const [d] = await f.sql.query<{ id: string; at: string }>(
      `SELECT id, ${keyText('event_occurred_at')} AS at
         FROM webhook_deliveries_${partition(day)} WHERE status = 'pending' LIMIT 1`,
      [],
    );
    const store = new DeliveryStore(f.sql, new DayPartitions(f.sql));
    const [claimed] = await store.claimMany([{ id: d.id, at: d.at }]);
    expect(claimed).toMatchObject({ id: d.id, attemptCount: 0, eventId: expect.any(String), active: true });
    // claimed once: a second claim of the same delivery finds it leased
    expect(await store.claimMany([{ id: d.id, at: d.at }])).toEqual([null]);
  });
});

/** The day partitions' suffix of a date (YYYY-MM-DD). */
function partition(day: string): string {
  return `p${day.replace(/-/g, '')}`;
}
