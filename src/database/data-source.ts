import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import pg, { Client, ClientConfig, Pool, PoolClient, QueryConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { DatabaseNotAnswering } from './database-away';
import { MIGRATIONS } from './migrations';

/** Distinct prepared statements one connection keeps at most; statements beyond run unnamed. */
export const MAX_PREPARED_PER_CONNECTION = 256;

/**
 * A pg client that runs parameterized SQL as named prepared statements, so Postgres parses and plans each
 * distinct statement once per connection instead of on every call (the name is a digest of the text, so
 * one name always means one text). Statements without parameters (BEGIN, COMMIT, DDL) run as they are.
 */
export class PreparingClient extends Client {
  /** Statement names by text, shared by every connection of the process (bounded: cleared when full). */
  private static readonly nameOf = new Map<string, string>();
  /** How many connections of the process have been closed for not answering (notAnswered). */
  private static unanswered = 0;
  private readonly names = new Set<string>();
  /** PreparingClient.unanswered when this connection was opened or last answered. */
  private heardAt = PreparingClient.unanswered;

  /**
   * pg-pool hands a new connection over with no 'error' listener, and its taker (TypeORM, Sql) attaches its own only
   * after an await; a backend terminated as it starts sends its FATAL message in the same read as its ReadyForQuery,
   * and that error, with nobody listening, would stop the process. With this listener it only leaves the connection
   * not queryable: its next statement fails as the database's ("not queryable", a 503) and the pool drops it.
   */
  constructor(config?: string | (ClientConfig & StallOption)) {
    super(config);
    this.on('error', () => undefined);
    const stall = typeof config === 'object' ? config.answerWithinMs : undefined;
    this.answerWithinMs = stall !== undefined && stall > 0 ? stall : undefined;
  }

  /**
   * How long a statement may wait for its answer (from when it is handed to this connection) before the connection
   * is closed under it (its error: DatabaseNotAnswering); unset, for ever. A Postgres that froze, or a network that
   * drops packets without a reset, never answers and never closes the connection, and TCP alone would wait for many
   * minutes; the server's own statement_timeout cannot help there. Closing it fails the statement and everything
   * queued behind it on this connection, and takes the connection out of use (it is no longer queryable, so the pool
   * drops it, and a ROLLBACK sent after fails at once instead of waiting as long again).
   */
  private readonly answerWithinMs?: number;

  static statementName(text: string): string {
    let name = PreparingClient.nameOf.get(text);
    if (name === undefined) {
      if (PreparingClient.nameOf.size >= 4 * MAX_PREPARED_PER_CONNECTION) PreparingClient.nameOf.clear();
      name = `s_${createHash('sha1').update(text).digest('base64url')}`;
      PreparingClient.nameOf.set(text, name);
    }
    return name;
  }

  override query(config: unknown, values?: unknown, callback?: unknown): any {
    let args = [config, values, callback];
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = PreparingClient.statementName(config);
      if (this.keeps(name)) args = [{ name, text: config, values } satisfies QueryConfig, undefined, callback];
    } else if (isNamed(config) && !this.keeps(config.name)) {
      // named by its caller (Sql.scan): over the limit it runs unnamed, like any other statement
      args = [{ ...config, name: undefined }, values, callback];
    }
    const ms = this.answerWithinMs;
    // a query object of its own (a cursor, a stream) answers in parts, at its reader's pace: it is not bounded
    if (ms === undefined || typeof (config as { submit?: unknown } | null)?.submit === 'function')
      return (super.query as (...args: unknown[]) => unknown)(...args);
    const timer = setTimeout(() => this.notAnswered(ms), ms).unref();
    const answered = () => {
      clearTimeout(timer);
      this.heardAt = PreparingClient.unanswered;
    };
    const at = typeof args[1] === 'function' ? 1 : typeof args[2] === 'function' ? 2 : -1;
    if (at >= 0) {
      const done = args[at] as (err: unknown, res: unknown) => void;
      args[at] = (err: unknown, res: unknown) => {
        answered();
        done(err, res);
      };
    }
    let result: unknown;
    try {
      result = (super.query as (...args: unknown[]) => unknown)(...args);
    } catch (err) {
      answered();
      throw err;
    }
    if (at < 0) (result as Promise<unknown>).then(answered, answered);
    return result;
  }

  /**
   * Closes the connection: pg says goodbye and waits for the server to close its side, which a server that froze, or
   * a network that drops packets, never does; with answerWithinMs set, the connection is cut after CLOSE_WAIT_MS
   * (a pool's end waits for every connection's, and a stop for the pool's).
   */
  override end(): Promise<void>;
  override end(callback: (error: Error) => void): void;
  override end(callback?: (error: Error) => void): Promise<void> | void {
    if (this.answerWithinMs !== undefined) {
      const stream = this.socket;
      if (stream && !stream.destroyed) {
        const cut = setTimeout(() => stream.destroy(), CLOSE_WAIT_MS).unref();
        stream.once('close', () => clearTimeout(cut));
      }
    }
    return callback ? super.end(callback) : super.end();
  }

  /**
   * Whether another connection of the process has been closed for not answering since this one last answered (or
   * opened). Whatever silenced that one (a server that froze, a network that dropped the connections it held) may
   * have silenced this one too while it sat idle: handed out, its next statement could wait as long in its turn, and
   * a pool holding a dozen such connections would hand them out one after another. CheckedPool drops it instead.
   */
  get unheard(): boolean {
    return this.answerWithinMs !== undefined && this.heardAt < PreparingClient.unanswered;
  }

  /** Closes the connection under a statement that went unanswered: it, and every one queued behind it, fail. */
  private notAnswered(waitedMs: number): void {
    PreparingClient.unanswered++;
    this.socket?.destroy(new DatabaseNotAnswering(waitedMs));
  }

  /** The connection's socket (pg keeps it on its connection, which its types do not show). */
  private get socket(): Socket | undefined {
    return (this as unknown as { connection?: { stream?: Socket } }).connection?.stream;
  }

  /** Whether statement `name` is, or may now be, prepared on this connection (counted toward the limit). */
  private keeps(name: string): boolean {
    if (this.names.has(name)) return true;
    if (this.names.size >= MAX_PREPARED_PER_CONNECTION) return false;
    this.names.add(name);
    return true;
  }
}

type ConnectCallback = (
  err: Error | undefined,
  client: PoolClient | undefined,
  release: (err?: boolean | Error) => void,
) => void;

/**
 * The service's pools (TypeORM's, through its `driver` option, and Sql's keyed one): a pg Pool that never hands out
 * a connection that may have been silenced with one found not answering (PreparingClient.unheard). Such a
 * connection is closed, and the next idle one, or a new one, is taken: after a connection was closed for not
 * answering, only the statement that found it out waits for the bound, not one for each connection that sat idle.
 * Those that answered since are kept; a healthy one dropped with the others costs one new connection.
 */
export class CheckedPool extends Pool {
  override connect(): Promise<PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<PoolClient> | void {
    const taken = this.heard();
    if (!callback) return taken;
    taken.then(
      (client) => callback(undefined, client, client.release.bind(client)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  private async heard(): Promise<PoolClient> {
    for (;;) {
      const client = await super.connect();
      if (!(client instanceof PreparingClient) || !client.unheard) return client;
      client.release(true);
    }
  }
}

/** pg as TypeORM is to load it, with CheckedPool for its Pool. */
const PG_CHECKED = Object.create(pg, { Pool: { value: CheckedPool } }) as typeof pg;

/** PreparingClient's own option, given with pg's (the pool hands its options to every connection it opens). */
export interface StallOption {
  /** See PreparingClient.answerWithinMs; answerWithinMs() gives it for a statement_timeout. */
  answerWithinMs?: number;
}

function isNamed(config: unknown): config is QueryConfig & { name: string } {
  return typeof config === 'object' && config !== null && typeof (config as QueryConfig).name === 'string';
}

/**
 * How long closing a connection of the service's pools waits for the server to close its side (a healthy one does at
 * once) before the connection is cut.
 */
export const CLOSE_WAIT_MS = 1_000;

/** How long a pooled connection may stay idle before it is closed (given back to the server). */
export const POOL_IDLE_MS = 60_000;

/**
 * How long opening a connection (or waiting for a free one in the pool) may take: a server that accepts the TCP
 * connection but never answers (a frozen or overloaded host, another service on that port) otherwise stalls a
 * request, or the start-up, for ever; past this the caller gets an error it can report.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long the service waits for the answer to a statement that may run `statementTimeoutMs` in Postgres before it
 * takes the server for gone and closes the connection (PreparingClient): as long again, up to 5 s more, so that a
 * server that is only slow cancels the statement itself first, and says so (SQLSTATE 57014).
 */
export function answerWithinMs(statementTimeoutMs: number): number {
  return statementTimeoutMs + Math.min(statementTimeoutMs, 5_000);
}

/**
 * How long a transaction of the service's pools may stay open with no statement running before Postgres ends it
 * (idle_in_transaction_session_timeout): longer than any wait of the service inside one (an identity provider's 10 s),
 * it ends a transaction whose client cut its connection while Postgres could not tell (a connection closed for not
 * answering, a network partition), and its row locks with it, instead of at TCP keepalive's pace (hours).
 */
export const IDLE_IN_TRANSACTION_MS = 60_000;

/**
 * How long a statement may take. With `statementTimeoutMs` (the service's own pools) Postgres cancels a statement
 * that runs longer (statement_timeout, lock waits included), and the service closes a connection whose statement
 * went unanswered for longer still, and ends a transaction left idle past IDLE_IN_TRANSACTION_MS; without it (the
 * migrations, which may rewrite big tables), none of these.
 */
export interface StatementBounds {
  statementTimeoutMs?: number;
}

/** The TypeORM options shared by the app, the migration runner and the tests. Never `synchronize`. */
export function dataSourceOptions(url: string, bounds: StatementBounds = {}): DataSourceOptions {
  const { statementTimeoutMs } = bounds;
  return {
    type: 'postgres',
    driver: PG_CHECKED,
    url,
    synchronize: false,
    migrationsRun: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    entities: [],
    // pg-pool options: 20 connections per process, each preparing the statements it runs; a connection is
    // replaced after an hour (once released), so the statements it prepared do not pile up: the dispatcher's hot
    // statements name the day partition of their rows, a new text each day. An idle connection is kept for
    // POOL_IDLE_MS: a new one is expensive on the partitioned log (its backend loads the catalog entries of every
    // partition and index it touches and prepares its statements again), and pg-pool's 10 s default closed the
    // connections a burst had opened, so the next small burst opened a dozen cold ones at once and stalled
    // requests for most of a second
    extra: {
      max: 20,
      Client: PreparingClient,
      maxLifetimeSeconds: 3600,
      idleTimeoutMillis: POOL_IDLE_MS,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(statementTimeoutMs === undefined
        ? {}
        : {
            statement_timeout: statementTimeoutMs,
            answerWithinMs: answerWithinMs(statementTimeoutMs),
            idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
          }),
    },
  };
}

const MIGRATION_LOCK = 4242_0001;

/** Runs pending migrations under an advisory lock, so several processes may start at once. */
export async function runMigrations(url: string): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(url));
  await ds.initialize();
  const runner = ds.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const done = await ds.runMigrations({ transaction: 'each' });
    return done.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
    await ds.destroy();
  }
}
