import { AddressInfo, createServer, Server } from 'node:net';
import { Pool } from 'pg';
import { useDataSource } from '../../test/helpers/use-service';
import { MAX_PREPARED_PER_CONNECTION, POOL_IDLE_MS, PreparingClient } from './data-source';
import { databaseAway } from './database-away';

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

describe('a pooled PreparingClient whose backend is terminated as it starts', () => {
  // A server that answers the start-up with ReadyForQuery and, in the same TCP segment, the FATAL message of a
  // backend terminated at that moment (pg_terminate_backend, a fast stop): pg-pool hands the connection over with no
  // 'error' listener, and its taker attaches one only after an await, so the error arrives with nobody listening.
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const message = (type: string, body: Buffer): Buffer => {
      const head = Buffer.alloc(5);
      head.write(type, 0, 'latin1');
      head.writeInt32BE(body.length + 4, 1);
      return Buffer.concat([head, body]);
    };
    const fields = ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'];
    const reply = Buffer.concat([
      message('R', Buffer.from([0, 0, 0, 0])), // AuthenticationOk
      message('Z', Buffer.from('I')), // ReadyForQuery
      message('E', Buffer.from(fields.map((f) => `${f}\0`).join('') + '\0', 'latin1')),
    ]);
    server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(reply));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('is handed over not queryable (an error a request answers 503), without an error event nobody hears', async () => {
    const pool = new Pool({ host: '127.0.0.1', port, user: 'u', database: 'd', Client: PreparingClient });
    pool.on('error', () => undefined);
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    try {
      const client = await pool.connect();
      const next = await client.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      );
      client.release();
      expect(databaseAway(next)).toBe(true);
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await pool.end();
    }
  });
});
