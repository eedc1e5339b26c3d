import { useDataSource } from '../../test/helpers/use-service';
import { pgCode } from './sql';

describe('Sql.scan', () => {
  const fixture = useDataSource();
  const QUERY_CANCELED = '57014';

  /** The backend and its statement_timeout, read by a plain statement on the pool. */
  const session = async () =>
    (
      await fixture.sql.query<{ pid: number; timeout: string }>(
        `SELECT pg_backend_pid() AS pid, current_setting('statement_timeout') AS timeout`,
      )
    )[0];

  it('has Postgres end a statement that outlives its timeoutMs, and gives its connection back as it was', async () => {
    const before = await session();
    expect(before.timeout).toBe('0');

    const started = Date.now();
    const err = await fixture.sql.scan('SELECT pg_sleep(30)', [], { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(pgCode(err)).toBe(QUERY_CANCELED);
    expect(Date.now() - started).toBeLessThan(10_000);

    // the same connection (the pool hands out the one last given back), with no limit left on it
    const after = await session();
    expect(after.pid).toBe(before.pid);
    expect(after.timeout).toBe('0');
    const [{ pid, timeout, plan }] = await fixture.sql.scan<{ pid: number; timeout: string; plan: string }>(
      `SELECT pg_backend_pid() AS pid, current_setting('statement_timeout') AS timeout,
              current_setting('plan_cache_mode') AS plan`,
      [],
      { timeoutMs: 1500 },
    );
    expect({ pid, timeout, plan }).toEqual({ pid: before.pid, timeout: '1500ms', plan: 'force_generic_plan' });
    expect(await session()).toEqual(before);
  });

  it('sets no limit without timeoutMs', async () => {
    const [row] = await fixture.sql.scan<{ timeout: string }>(`SELECT current_setting('statement_timeout') AS timeout`);
    expect(row.timeout).toBe('0');
  });
});
