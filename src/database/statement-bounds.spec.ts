import { DataSource } from 'typeorm';
import { TcpRelay } from '../../test/helpers/tcp-relay';
import { useTestEnv } from '../../test/helpers/use-service';
import { answerWithinMs, dataSourceOptions, IDLE_IN_TRANSACTION_MS } from './data-source';
import { DatabaseNotAnswering, databaseAway } from './database-away';
import { Sql } from './sql';

const STATEMENT_TIMEOUT_MS = 500;

/** The service's pools (at most `max` connections) on the spec's database, through a relay the spec can silence. */
async function behindRelay(
  env: ReturnType<typeof useTestEnv>,
  max: number,
): Promise<{ relay: TcpRelay; db: DataSource; sql: Sql }> {
  const target = new URL(env.databaseUrl);
  const relay = env.adopt(await TcpRelay.start({ host: target.hostname, port: Number(target.port || 5432) }));
  const proxied = new URL(env.databaseUrl);
  proxied.port = String(relay.port);
  const options = dataSourceOptions(proxied.toString(), { statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  const db = new DataSource({ ...options, extra: { ...(options.extra as object), max } });
  await db.initialize();
  const sql = new Sql(db);
  env.adopt({ close: () => db.destroy() });
  env.adopt({ close: () => sql.onApplicationShutdown() });
  return { relay, db, sql };
}

/**
 * The service's pools bound every statement twice: Postgres cancels one that runs past its statement_timeout, and the
 * service closes a connection whose statement got no answer for longer still (a frozen server, a network that drops
 * packets: neither ever answers or closes the connection). Here through a relay that can silence the connections it
 * holds, on a pool of one connection so that every statement meets the one the spec silenced.
 */
describe('statement bounds', () => {
  const env = useTestEnv();
  let relay: TcpRelay;
  let db: DataSource;
  let sql: Sql;

  beforeAll(async () => ({ relay, db, sql } = await behindRelay(env, 1)));

  const backend = async (): Promise<number> =>
    (await sql.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid;

  /** How long `work` took to fail, and with what. */
  async function failure(work: () => Promise<unknown>): Promise<{ ms: number; err: unknown }> {
    const t0 = Date.now();
    try {
      await work();
    } catch (err) {
      return { ms: Date.now() - t0, err };
    }
    throw new Error('it did not fail');
  }

  it('a statement that runs too long is cancelled by Postgres itself, and counts as the database away', async () => {
    const { err } = await failure(() => sql.query('SELECT pg_sleep(5)'));
    // Postgres's own error (its connection answered), not the service's closing of a silent one
    expect(err).not.toBeInstanceOf(DatabaseNotAnswering);
    expect((err as { code?: string }).code).toBe('57014');
    expect(databaseAway(err)).toBe(true);
  });

  it('a statement left unanswered fails once its bound is past, its connection closed, and the pool serves again on a new one', async () => {
    const pid = await backend();
    relay.silence();
    const { err } = await failure(() => sql.query('SELECT 1'));
    expect(err).toBeInstanceOf(DatabaseNotAnswering);
    expect(databaseAway(err)).toBe(true);
    // the silenced connection is gone from the pool: a new one (the relay forwards new connections) answers
    expect(await backend()).not.toBe(pid);
  });

  it('a transaction whose statement goes unanswered fails without waiting for its ROLLBACK, on either path', async () => {
    expect(await backend()).toEqual(expect.any(Number));
    const raw = await failure(() =>
      sql.transaction(async (tx) => {
        await tx.query('SELECT 1');
        relay.silence();
        await tx.query('SELECT 2');
      }),
    );
    expect(raw.err).toBeInstanceOf(DatabaseNotAnswering);
    // the ROLLBACK fails at once on a closed connection: the whole took one bound, not two
    expect(raw.ms).toBeLessThan(2 * answerWithinMs(STATEMENT_TIMEOUT_MS));

    expect(await backend()).toEqual(expect.any(Number));
    const typeorm = await failure(() =>
      db.transaction(async (m) => {
        await m.query('SELECT 1');
        relay.silence();
        await m.query('SELECT 2');
      }),
    );
    expect(databaseAway(typeorm.err)).toBe(true);
    expect(typeorm.ms).toBeLessThan(2 * answerWithinMs(STATEMENT_TIMEOUT_MS));
    expect(await backend()).toEqual(expect.any(Number));
  });

  it('has Postgres end a transaction left idle past IDLE_IN_TRANSACTION_MS, and leaves the migrations unbounded', async () => {
    const [row] = await sql.query<{ idle: string }>(
      `SELECT setting AS idle FROM pg_settings WHERE name = 'idle_in_transaction_session_timeout'`,
    );
    expect(Number(row.idle)).toBe(IDLE_IN_TRANSACTION_MS);
    const extra = dataSourceOptions('postgres://x@127.0.0.1/x').extra as Record<string, unknown>;
    expect(extra.statement_timeout).toBeUndefined();
    expect(extra.answerWithinMs).toBeUndefined();
    expect(extra.idle_in_transaction_session_timeout).toBeUndefined();
  });
});

/**
 * Once a connection has been closed for not answering, the pools hand out none of the connections that sat idle
 * meanwhile without answering (CheckedPool): whatever silenced the one may have silenced them all, and each would
 * otherwise cost its own bound, one statement after another.
 */
describe('connections left idle when one went unanswered', () => {
  const env = useTestEnv();
  let relay: TcpRelay;
  let db: DataSource;
  let sql: Sql;
  const POOL = 4;

  beforeAll(async () => ({ relay, db, sql } = await behindRelay(env, POOL)));

  const PID = 'SELECT pg_backend_pid() AS pid, pg_sleep(0.1)';
  /** The backends of `n` connections of a pool, opened together (each statement holds its connection a moment). */
  const opened = async (run: () => Promise<{ pid: number }[]>, n: number): Promise<number[]> =>
    (await Promise.all(Array.from({ length: n }, run))).map((rows) => rows[0].pid);

  it('are dropped, not handed out one after another: only the statement that found it out fails', async () => {
    const main = await opened(() => sql.query(PID), POOL);
    const keyed = await opened(() => sql.keyed(PID, []), 2);
    expect(new Set(main).size).toBe(POOL);
    relay.silence();
    await expect(sql.query('SELECT 1')).rejects.toBeInstanceOf(DatabaseNotAnswering);
    // each path of the pools, in turn, on a new connection: the main pool (raw and TypeORM's) and the keyed one
    const after = [
      ...(await sql.query<{ pid: number }>(PID)),
      ...(await db.query<{ pid: number }[]>(PID)),
      ...(await db.transaction((m) => m.query<{ pid: number }[]>(PID))),
      ...(await sql.keyed<{ pid: number }>(PID, [])),
    ].map((r) => r.pid);
    expect(after.filter((pid) => main.includes(pid) || keyed.includes(pid))).toEqual([]);
    // one that answered since is kept
    expect(after).toContain((await sql.query<{ pid: number }>(PID))[0].pid);
  });
});
