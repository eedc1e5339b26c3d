import { QueryFailedError } from 'typeorm';
import { databaseAway } from './database-away';

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
      "TypeORM's wrapping of one",
      new QueryFailedError('SELECT 1', [], withCode('the database system is shutting down', { code: '57P03' })),
    ],
  ])('is true of %s', (_name, error) => {
    expect(databaseAway(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('duplicate key value', { code: '23505' })],
    ['a query cancelled (57014)', withCode('canceling statement due to statement timeout', { code: '57014' })],
    ['a serialization failure', withCode('could not serialize access', { code: '40001' })],
    ['an error of ours', new Error('boom')],
    ['a reset without a syscall (a client that went away)', withCode('aborted', { code: 'ECONNRESET' })],
    ['nothing', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('is false of %s', (_name, error) => {
    expect(databaseAway(error)).toBe(false);
  });
});
