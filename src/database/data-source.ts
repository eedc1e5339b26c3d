import { createHash } from 'node:crypto';
import { Client, QueryConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
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
  private readonly names = new Set<string>();

  /**
   * pg-pool hands a new connection over with no 'error' listener, and its taker (TypeORM, Sql) attaches its own only
   * after an await; a backend terminated as it starts sends its FATAL message in the same read as its ReadyForQuery,
   * and that error, with nobody listening, would stop the process. With this listener it only leaves the connection
   * not queryable: its next statement fails as the database's ("not queryable", a 503) and the pool drops it.
   */
  constructor(config?: ConstructorParameters<typeof Client>[0]) {
    super(config);
    this.on('error', () => undefined);
  }

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
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = PreparingClient.statementName(config);
      if (this.keeps(name)) {
        const named: QueryConfig = { name, text: config, values };
        return (super.query as (...args: unknown[]) => unknown)(named, callback);
      }
    } else if (isNamed(config) && !this.keeps(config.name)) {
      // named by its caller (Sql.scan): over the limit it runs unnamed, like any other statement
      return (super.query as (...args: unknown[]) => unknown)({ ...config, name: undefined }, values, callback);
    }
    return (super.query as (...args: unknown[]) => unknown)(config, values, callback);
  }

  /** Whether statement `name` is, or may now be, prepared on this connection (counted toward the limit). */
  private keeps(name: string): boolean {
    if (this.names.has(name)) return true;
    if (this.names.size >= MAX_PREPARED_PER_CONNECTION) return false;
    this.names.add(name);
    return true;
  }
}

function isNamed(config: unknown): config is QueryConfig & { name: string } {
  return typeof config === 'object' && config !== null && typeof (config as QueryConfig).name === 'string';
}

/** How long a pooled connection may stay idle before it is closed (given back to the server). */
export const POOL_IDLE_MS = 60_000;

/**
 * How long opening a connection (or waiting for a free one in the pool) may take: a server that accepts the TCP
 * connection but never answers (a frozen or overloaded host, another service on that port) otherwise stalls a
 * request, or the start-up, for ever; past this the caller gets an error it can report.
 */
export const CONNECT_TIMEOUT_MS = 10_000;

/** The TypeORM options shared by the app, the migration runner and the tests. Never `synchronize`. */
export function dataSourceOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
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
