import { QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

/**
 * A statement whose answer did not come within its connection's bound (PreparingClient): PostgreSQL froze, or the
 * network to it drops packets without a reset. The connection was closed, and the statement's transaction with it.
 */
export class DatabaseNotAnswering extends Error {
  constructor(waitedMs: number) {
    super(`PostgreSQL did not answer a statement within ${waitedMs} ms; its connection was closed`);
    this.name = 'DatabaseNotAnswering';
  }
}

/**
 * SQLSTATEs of a PostgreSQL that is away for the moment: class 08 (connection exception), 57P01 (admin_shutdown),
 * 57P02 (crash_shutdown), 57P03 (cannot_connect_now: starting up, shutting down, in recovery); and 57014
 * (query_canceled): a statement that ran past the service's statement_timeout (DATABASE_STATEMENT_TIMEOUT), or that an
 * operator cancelled. Either way its transaction was rolled back, and it may be sent again.
 */
const AWAY_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|57014)$/;
const STATEMENT_CANCELLED = '57014';
/** A connection that could not be opened, or one that was lost (reset by the server or the network). */
const CONNECTION_FAILED = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNRESET',
  'EPIPE',
]);
/**
 * pg's errors of a connection lost: the server closed it under a query (a restart's fast shutdown, a crash), or a
 * query came to a client whose connection had already failed (its backend terminated while a transaction held it
 * between two statements).
 */
const CONNECTION_LOST = new Set([
  'Connection terminated unexpectedly',
  'Client has encountered a connection error and is not queryable',
]);

/** The pg error under TypeORM's wrapper (a QueryFailedError keeps it as `driverError`), or the error itself. */
export function driverErrorOf(error: unknown): unknown {
  return (error as { driverError?: unknown } | null)?.driverError ?? error;
}

/**
 * Whether a database error is a statement that PostgreSQL cancelled (57014): one that ran past the service's
 * statement_timeout, or that an operator cancelled. A case of databaseAway in which the database did answer.
 */
export function statementCancelled(error: unknown): boolean {
  const e = driverErrorOf(error);
  return e instanceof Error && (e as NodeJS.ErrnoException).code === STATEMENT_CANCELLED;
}

/**
 * Whether a database error says PostgreSQL was away (restarting, failing over, unreachable, not answering in
 * time), not that something broke: what was not committed was rolled back, and it may be run again once PostgreSQL
 * is back. (Only the database's errors are to be asked: a connection of another kind that could not be opened looks
 * the same.)
 */
export function databaseAway(error: unknown): boolean {
  // TypeORM releases a query runner itself when its connection fails (a transaction's backend terminated between two
  // statements): the transaction's next statement, or its COMMIT, then finds the runner released under it (the
  // service releases its own runners only once done with them)
  if (error instanceof QueryRunnerAlreadyReleasedError || error instanceof QueryRunnerProviderAlreadyReleasedError)
    return true;
  const e = driverErrorOf(error);
  if (!(e instanceof Error)) return false;
  if (e instanceof DatabaseNotAnswering) return true;
  const { code, syscall } = e as NodeJS.ErrnoException;
  if (typeof code === 'string' && AWAY_SQLSTATE.test(code)) return true;
  if (typeof code === 'string' && CONNECTION_FAILED.has(code) && syscall !== undefined) return true;
  return CONNECTION_LOST.has(e.message);
}
