import { useDataSource } from '../../test/helpers/use-service';
import { MAX_PREPARED_PER_CONNECTION, POOL_IDLE_MS, PreparingClient } from './data-source';

describe('PreparingClient', () => {
  const fixture = useDataSource();
  let client: PreparingClient;

  beforeAll(async () => {
    client = new PreparingClient({ connectionString: fixture.env.databaseUrl });
    await client.connect();
    fixture.adopt({ close: () => client.end() });
  });

  const prepared = async (): Promise<string[]> =>
    (await client.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
      (r: { name: string }) => r.name,
    );

  it('keeps no more prepared statements than its limit, counting those named by their caller', async () => {
    // named by the caller, as Sql.scan does: prepared while there is room
    const scan = { name: PreparingClient.statementName('SELECT 1 AS one'), text: 'SELECT 1 AS one', values: [] };
    expect((await client.query(scan)).rows).toEqual([{ one: 1 }]);
    expect(await prepared()).toEqual([scan.name]);

    for (let i = 0; (await prepared()).length < MAX_PREPARED_PER_CONNECTION; i++) {
      await client.query(`SELECT $1::int + ${i} AS n`, [1]);
    }
    const full = await prepared();
    expect(full).toHaveLength(MAX_PREPARED_PER_CONNECTION);

    // over the limit: a new statement of either kind still runs, unnamed
    const other = { name: PreparingClient.statementName('SELECT 2 AS two'), text: 'SELECT 2 AS two', values: [] };
    expect((await client.query(other)).rows).toEqual([{ two: 2 }]);
    expect((await client.query('SELECT $1::int AS n', [7])).rows).toEqual([{ n: 7 }]);
    // and one it already holds is still run by its name
    expect((await client.query(scan)).rows).toEqual([{ one: 1 }]);
    expect(await prepared()).toEqual(full);
  });
});

describe('the connection pool', () => {
  const fixture = useDataSource();
  const PG_POOL_DEFAULT_IDLE_MS = 10_000;

  /** The backends serving `n` statements run at once (each holds its connection for a moment). */
  const burst = async (n: number): Promise<Set<number>> =>
    new Set(
      (
        await Promise.all(
          Array.from({ length: n }, () =>
            fixture.sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.2)'),
          ),
        )
      ).map(([r]) => r.pid),
    );

  it('keeps the connections a burst opened through a lull longer than pg-pool would, and serves the next burst on them', async () => {
    expect(POOL_IDLE_MS).toBeGreaterThan(PG_POOL_DEFAULT_IDLE_MS + 2000);
    const opened = await burst(6);
    expect(opened.size).toBe(6);
    await new Promise((resolve) => setTimeout(resolve, PG_POOL_DEFAULT_IDLE_MS + 1500));
    // new backends would be cold: the catalog entries of every partition they touch loaded again, every statement
    // prepared again
    const again = await burst(6);
    expect([...again].sort()).toEqual([...opened].sort());
  }, 30_000);
});
