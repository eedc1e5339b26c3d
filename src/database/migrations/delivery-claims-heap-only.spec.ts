import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { DeliveryClaimsHeapOnly1763802100000 } from './1763802100000-delivery-claims-heap-only';

const ROWS = 200;
/** As the worker claims: a statement for the jobs that arrived together, committed before the next. */
const BATCH = 16;

// Delivery pages keep room for a new version of every row, so that every claim is a heap-only update; down puts
// the earlier room back, with which some claims of a batch are not.
describe('migration DeliveryClaimsHeapOnly', () => {
  const fixture = useDataSource();
  const migration = new DeliveryClaimsHeapOnly1763802100000();
  let runner: QueryRunner;
  let webhook: string;

  beforeAll(async () => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
    webhook = randomUUID();
    await runner.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted) VALUES ($1, 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x')`,
      [webhook],
    );
  });

  /** The fillfactor of every delivery partition, by name. */
  const fillfactors = async (): Promise<Record<string, string | null>> => {
    const rows: { name: string; options: string[] | null }[] = await runner.query(
      `SELECT c.relname AS name, c.reloptions AS options FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'webhook_deliveries'::regclass`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.options?.find((o) => o.startsWith('fillfactor=')) ?? null]));
  };
  const everyPartition = async (fillfactor: string) => {
    const all = await fillfactors();
    expect(Object.keys(all).length).toBeGreaterThan(1);
    expect(all).toEqual(Object.fromEntries(Object.keys(all).map((name) => [name, `fillfactor=${fillfactor}`])));
  };

  /**
   * Makes the partitions of a day `daysAhead` from now (by delivery_log_ensure_partitions, as retention does),
   * relays ROWS deliveries of one event of that day into it, and claims them in batches: how many of the claims
   * were heap-only.
   */
  async function heapOnlyClaims(daysAhead: number): Promise<number> {
    const day = new Date(Date.now() + daysAhead * 86_400_000).toISOString().slice(0, 10);
    await runner.query(`SELECT delivery_log_ensure_partitions($1::date, $1::date)`, [day]);
    const partition = `webhook_deliveries_p${day.replace(/-/g, '')}`;
    const ids: string[] = (
      await runner.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, next_attempt_at, event_seq, event_occurred_at)
         SELECT gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved', now(), n, $2::date + interval '12 hours'
           FROM generate_series(1, ${ROWS}) n ORDER BY n RETURNING id`,
        [webhook, day],
      )
    ).map((r: { id: string }) => r.id);
    let hot = 0;
    for (let i = 0; i < ids.length; i += BATCH) {
      // the backend's counts since they were last reported, which happens only between transactions
      await runner.startTransaction();
      try {
        const count = async (): Promise<{ hot: number; updated: number }> =>
          (
            await runner.query(
              `SELECT pg_stat_get_xact_tuples_hot_updated($1::regclass)::int AS hot, pg_stat_get_xact_tuples_updated($1::regclass)::int AS updated`,
              [partition],
            )
          )[0];
        const before = await count();
        // what a claim writes (DeliveryStore's claim statement)
        await runner.query(
          `UPDATE ${partition} SET locked_until = now() + interval '35 seconds', held = NULL WHERE id = ANY($1::uuid[])`,
          [ids.slice(i, i + BATCH)],
        );
        const after = await count();
        expect(after.updated - before.updated).toBe(Math.min(BATCH, ids.length - i));
        hot += after.hot - before.hot;
      } finally {
        await runner.commitTransaction();
      }
    }
    return hot;
  }

  it('leaves room for every claim both in the partitions there are and in those made later, and back', async () => {
    await everyPartition('50');
    expect(await heapOnlyClaims(20)).toBe(ROWS);

    await migration.down(runner);
    await everyPartition('80');
    // a new day's partition is made with the earlier room: a batch of claims outgrows it
    expect(await heapOnlyClaims(21)).toBeLessThan(ROWS);

    await migration.up(runner);
    await everyPartition('50');
    expect(await heapOnlyClaims(22)).toBe(ROWS);
  });
});
