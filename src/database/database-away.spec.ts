import { Client } from 'pg';
import { DataSource, EntityManager, QueryFailedError } from 'typeorm';
import { ENV_ADMIN_URL, withAdminClient } from '../../test/setup/test-infra';
import { DatabaseNotAnswering, databaseAway } from './database-away';

const withCode = (message: string, extra: Record<string, unknown>) => Object.assign(new Error(message), extra);

describe('databaseAway', () => {
  it.each([
    [
      'a connection refused',
      withCode('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED', syscall: 'connect' }),
    ],
    ['a host unreachable', withCode('connect EHOSTUNREACH', { code: 'EHOSTUNREACH', syscall: 'connect' })],
    ['a connection closed under a query', new Error('Connection terminated unexpectedly')],
    [
      'a query on a client whose connection had failed',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a connection reset', withCode('read ECONNRESET', { code: 'ECONNRESET', syscall: 'read' })],
    ['a write to a closed connection', withCode('write EPIPE', { code: 'EPIPE', syscall: 'write' })],
    [
      'admin_shutdown (a fast stop)',
      withCode('terminating connection due to administrator command', { code: '57P01' }),
    ],
    [
      'crash_shutdown',
      withCode('terminating connection because of crash of another server process', { code: '57P02' }),
    ],
    ['cannot_connect_now (starting up)', withCode('the database system is starting up', { code: '57P03' })],
    ['a connection failure', withCode('connection failure', { code: '08006' })],
    [
      'a statement past its statement_timeout',
      withCode('canceling statement due to statement timeout', { code: '57014' }),
    ],
    ['a statement left unanswered', new DatabaseNotAnswering(35_000)],
    [
      "TypeORM's wrapping of a statement left unanswered",
      new QueryFailedError('SELECT 1', [], new DatabaseNotAnswering(1)),
    ],
    [
      "TypeORM's wrapping of one",
      new QueryFailedError('SELECT 1', [], withCode('the database system is shutting down', { code: '57P03' })),
    ],
  ])('is true of %s', (_name, error) => {
    expect(databaseAway(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value', { code: '23505' })],
    ['a serialization failure', withCode('could not serialize access', { code: '40001' })],
    ['an error of ours', new Error('boom')],
    ['a reset without a syscall (a client that went away)', withCode('aborted', { code: 'ECONNRESET' })],
    ['nothing', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('is false of %s', (_name, error) => {
    expect(databaseAway(error)).toBe(false);
  });

  // what pg throws when a request's transaction is between two statements as its backend is terminated (an operator's
  // pg_terminate_backend, a failover): the next statement finds its client no longer queryable
  it('is true of the next statement of a transaction whose backend was terminated', async () => {
    const adminUrl = process.env[ENV_ADMIN_URL]!;
    const held = new Client({ connectionString: adminUrl });
    const failed = new Promise<unknown>((resolve) => held.on('error', resolve));
    await held.connect();
    try {
      await held.query('BEGIN');
      const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await withAdminClient(adminUrl, (c) => c.query('SELECT pg_terminate_backend($1)', [rows[0].pid]));
      expect(databaseAway(await failed)).toBe(true);
      const next = await held.query('SELECT 1').then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(next).toBeInstanceOf(Error);
      expect(databaseAway(next)).toBe(true);
    } finally {
      await held.end().catch(() => undefined);
    }
  });

  // TypeORM's transaction (DataSource.transaction, a request's transaction): its query runner is released by TypeORM
  // itself when the connection fails, so the next statement, or the COMMIT, throws that the runner was released
  it.each([
    ['the next statement', (m: EntityManager) => m.query('SELECT 1')],
    ['the COMMIT', (m: EntityManager) => m.queryRunner!.commitTransaction()],
  ])('is true of %s of a TypeORM transaction whose backend was terminated', async (_name, next) => {
    const adminUrl = process.env[ENV_ADMIN_URL]!;
    const ds = await new DataSource({ type: 'postgres', url: adminUrl }).initialize();
    try {
      const thrown = await ds
        .transaction(async (m) => {
          const [{ pid }] = await m.query<{ pid: number }[]>('SELECT pg_backend_pid() AS pid');
          await withAdminClient(adminUrl, (c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
          while (!m.queryRunner!.isReleased) await new Promise((resolve) => setTimeout(resolve, 10));
          await next(m);
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(thrown).toBeInstanceOf(Error);
      expect(databaseAway(thrown)).toBe(true);
    } finally {
      await ds.destroy();
    }
  });
});
