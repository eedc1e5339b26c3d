import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Pool, PoolClient } from 'pg';
import { DataSource, EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import { CheckedPool, PreparingClient } from './data-source';
import { RequestTransaction, TransactionHook } from './request-transaction';

/** What runs statements: the pool (Sql) or one connection (a transaction, a locked session). */
export interface Queryable {
  /** The rows of `text` with `params`. */
  query<R = Record<string, any>>(text: string, params?: unknown[]): Promise<R[]>;
  /** How many rows `text` changed (UPDATE, DELETE, INSERT without RETURNING). */
  execute(text: string, params?: unknown[]): Promise<number>;
}

/** A transaction opened by Sql.transaction: statements run on its one connection. */
export interface SqlTransaction extends Queryable {
  /** Runs `fn` once the transaction has committed (for work outside Postgres, such as queueing jobs). */
  afterCommit(fn: TransactionHook): void;
  /** Runs `fn` if the transaction does not commit (to undo work done outside Postgres). */
  afterRollback(fn: TransactionHook): void;
}

/** SQLSTATEs a caller may meet when it races another transaction over the same rows. */
export const PG_ERRORS = {
  serializationFailure: '40001',
  deadlock: '40P01',
  foreignKeyViolation: '23503',
  uniqueViolation: '23505',
  lockNotAvailable: '55P03',
  undefinedTable: '42P01',
} as const;

/** The SQLSTATE of a Postgres error, if `err` is one. */
export function pgCode(err: unknown): string | undefined {
  return (err as { code?: string } | null)?.code;
}

/** How Sql.scan runs a statement. */
export interface ScanOptions {
  /**
   * How long the statement may run in Postgres (its statement_timeout, waiting for locks included) before Postgres
   * cancels it: for a reader that gives up on its answer by then (a scrape's gauges), so that its statement does not
   * go on holding a connection, or wait in a lock queue, after nobody wants it. Unset: no limit.
   */
  timeoutMs?: number;
}

/** Connections of the keyed pool (Sql.keyed): a worker's claims and records, one statement of each in flight. */
export const KEYED_POOL_MAX = 4;

/**
 * How the keyed pool's connections plan: once per statement and connection (a generic plan, kept with the
 * prepared statement), and never by reading a whole table. Its statements find their rows by key, so an index is
 * always the right path; but a generic plan made while a new day partition is still small (or before its first
 * analyze) would read it whole, for as long as the plan is kept (BENCHMARKS.md, ninth and tenth rounds).
 */
export const KEYED_PLANNING: Readonly<Record<string, string>> = {
  plan_cache_mode: 'force_generic_plan',
  enable_seqscan: 'off',
};

/**
 * KEYED_PLANNING as statements, run on a keyed connection before its first statement: startup options would do, but
 * options given in DATABASE_URL replace them (pg lets the URL's values win).
 */
const KEYED_SET = Object.entries(KEYED_PLANNING)
  .map(([name, value]) => `SET ${name} = ${value}`)
  .join('; ');
/** The keyed connections that have run KEYED_SET. */
const keyedReady = new WeakSet<PoolClient>();

/**
 * Raw SQL on the application's own pool (the one TypeORM uses, whose connections prepare every
 * parameterized statement once: see PreparingClient), for every statement of the dispatcher and the hot
 * paths of the portal: one round trip per statement and nothing else. The worker's claims and attempt records
 * run on a small pool beside it (`keyed`), whose connections plan differently.
 *
 * Writes go through `transaction`, `write`, `execute` or the TypeORM counterparts. While a request transaction
 * is open (an idempotent request: its answer is stored with its change), they all join it and commit with it;
 * otherwise each commits on its own, exactly as written.
 */
@Injectable()
export class Sql implements Queryable, OnApplicationShutdown {
  private readonly logger = new Logger(Sql.name);
  private keyedPool?: Pool;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get pool(): Pool {
    return (this.db.driver as unknown as { master: Pool }).master;
  }

  /**
   * A read on the pool. Once the open request transaction has written, its reads run inside it instead: they
   * see its writes, and a request never holds one pooled connection while it waits for another.
   */
  async query<R = Record<string, any>>(text: string, params: unknown[] = []): Promise<R[]> {
    const request = RequestTransaction.current();
    if (request?.begun) return request.query<R>(text, params);
    return (await this.pool.query(text, params)).rows;
  }

  /**
   * A statement that finds every row it reads or changes by its key (the dispatcher's claims and attempt
   * records), on its own (never in a request transaction). It runs on a small pool of its own whose connections
   * plan each statement once, generically, and never with a sequential scan (KEYED_PLANNING): planning the claim
   * anew on every call cost Postgres more than running it. Opened on first use, so a process that sends nothing
   * (the API) holds none of its connections.
   */
  async keyed<R = Record<string, any>>(text: string, params: unknown[]): Promise<R[]> {
    const client = await this.checkout(this.keyedConnections());
    try {
      if (!keyedReady.has(client)) {
        await client.query(KEYED_SET);
        keyedReady.add(client);
      }
      return (await client.query(text, params)).rows;
    } finally {
      client.release();
    }
  }

  private keyedConnections(): Pool {
    if (!this.keyedPool) {
      this.keyedPool = new CheckedPool({ ...this.pool.options, max: KEYED_POOL_MAX });
      // an idle connection that fails (Postgres restarting) is dropped by the pool; without a listener its
      // 'error' event would end the process
      this.keyedPool.on('error', (err) => this.logger.warn({ err }, 'an idle keyed database connection failed'));
    }
    return this.keyedPool;
  }

  async onApplicationShutdown(): Promise<void> {
    const pool = this.keyedPool;
    this.keyedPool = undefined;
    await pool?.end();
  }

  /**
   * One write statement: on its own, or inside the open request transaction. `afterRollback` runs if the request
   * transaction it joined does not commit (on its own, a statement that fails has written nothing, and its caller
   * gets the error).
   */
  async write<R = Record<string, any>>(
    text: string,
    params: unknown[] = [],
    opts: { afterRollback?: TransactionHook } = {},
  ): Promise<R[]> {
    const request = RequestTransaction.current();
    if (request) {
      if (opts.afterRollback) request.afterRollback(opts.afterRollback);
      return request.join(() => request.query<R>(text, params));
    }
    return (await this.pool.query(text, params)).rows;
  }

  /** One write statement, answering how many rows it changed: on its own, or inside the request transaction. */
  async execute(text: string, params: unknown[] = []): Promise<number> {
    const request = RequestTransaction.current();
    if (request) return request.join(() => request.execute(text, params));
    return (await this.pool.query(text, params)).rowCount ?? 0;
  }

  /**
   * Runs `work` between BEGIN and COMMIT (ROLLBACK if it throws) on one connection; then the commit hooks, or
   * the rollback hooks. Inside a request transaction, `work` joins it: BEGIN is sent with its first statement,
   * and COMMIT (or ROLLBACK) and the hooks come when the request ends.
   */
  async transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const request = RequestTransaction.current();
    if (request)
      return request.join(() =>
        work({
          query: (text, params) => request.query(text, params),
          execute: (text, params) => request.execute(text, params),
          afterCommit: (fn) => request.afterCommit(fn),
          afterRollback: (fn) => request.afterRollback(fn),
        }),
      );
    const client = await this.checkout();
    const onCommit: TransactionHook[] = [];
    const onRollback: TransactionHook[] = [];
    let broken = false;
    let outcome: { ok: true; result: T } | { ok: false; err: unknown };
    try {
      await client.query('BEGIN');
      const tx: SqlTransaction = {
        query: async (text, params = []) => (await client.query(text, params)).rows,
        execute: async (text, params = []) => (await client.query(text, params)).rowCount ?? 0,
        afterCommit: (fn) => onCommit.push(fn),
        afterRollback: (fn) => onRollback.push(fn),
      };
      const result = await work(tx);
      await client.query('COMMIT');
      outcome = { ok: true, result };
    } catch (err) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      outcome = { ok: false, err };
    } finally {
      // a connection that could not even roll back is not given to anyone else
      client.release(broken);
    }
    // the hooks run with the connection back in the pool: they may wait on the world outside
    if (!outcome.ok) {
      for (const fn of onRollback) {
        try {
          await fn();
        } catch (err) {
          this.logger.warn({ err }, 'work to do after a rollback failed');
        }
      }
      throw outcome.err;
    }
    for (const fn of onCommit) await fn();
    return outcome.result;
  }

  /**
   * A statement over every day partition of the delivery log (the periodic scans: the reconciler's, the relay's
   * safety net, the gauges), on its own (never in a request transaction). Planning one for some thirty days of
   * several tables costs tens of milliseconds and running it a fraction of one, and a prepared statement's
   * first executions on a connection are planned anew each time (custom plans). So it runs with a generic plan,
   * made once per connection and kept with the statement; partitions are then pruned as it runs.
   */
  async scan<R = Record<string, any>>(text: string, params: unknown[] = [], opts: ScanOptions = {}): Promise<R[]> {
    const settings = ['SET plan_cache_mode = force_generic_plan'];
    const resets = ['RESET plan_cache_mode'];
    if (opts.timeoutMs !== undefined) {
      settings.push(`SET statement_timeout = ${Math.max(1, Math.round(opts.timeoutMs))}`);
      resets.push('RESET statement_timeout');
    }
    const client = await this.checkout();
    let broken = false;
    try {
      await client.query(settings.join('; '));
      try {
        // prepared by name even without parameters, so that the plan is kept
        return (await client.query({ name: PreparingClient.statementName(text), text, values: params })).rows;
      } finally {
        await client.query(resets.join('; ')).catch(() => (broken = true));
      }
    } finally {
      client.release(broken);
    }
  }

  /** TypeORM's `DataSource.transaction`, joining the request transaction when one is open. */
  async entityTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const request = RequestTransaction.current();
    if (request) return request.join(async () => work(await request.manager()));
    return this.db.transaction(work);
  }

  /**
   * TypeORM writes that need no transaction of their own: on the data source's manager, or inside the request
   * transaction when one is open.
   */
  async entityWrite<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const request = RequestTransaction.current();
    if (request) return request.join(async () => work(await request.manager()));
    return work(this.db.manager);
  }

  /**
   * Runs `fn` once what was written so far is committed: now, or when the open request transaction commits
   * (and never if it rolls back). For work outside Postgres that must follow the change, such as queueing jobs.
   */
  async afterCommit(fn: TransactionHook): Promise<void> {
    const request = RequestTransaction.current();
    if (request) request.afterCommit(fn);
    else await fn();
  }

  /**
   * Runs `work` while this process holds the session-level advisory lock `key`, on a connection of its own that
   * is idle (no transaction open) meanwhile; null, without running it, when another session holds the lock. The
   * work's own statements go through the pool, so a pass that talks to Redis keeps no transaction open.
   */
  async withLock<T>(key: number, work: (session: Queryable) => Promise<T>): Promise<T | null> {
    const client = await this.checkout();
    let broken = false;
    try {
      const [{ locked }] = (await client.query(`SELECT pg_try_advisory_lock($1) AS locked`, [key])).rows;
      if (!locked) return null;
      const session: Queryable = {
        query: async (text, params = []) => (await client.query(text, params)).rows,
        execute: async (text, params = []) => (await client.query(text, params)).rowCount ?? 0,
      };
      try {
        return await work(session);
      } finally {
        await client.query(`SELECT pg_advisory_unlock($1)`, [key]).catch((err) => {
          // closing the connection is what releases a session lock then
          broken = true;
          this.logger.warn({ err, key }, 'could not release an advisory lock; closing its connection');
        });
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * A connection of the pool for statements of its own. While it is out of the pool only its own listener (which
   * PreparingClient keeps so that such an error never ends the process) hears an error that arrives between
   * statements (Postgres restarting: "terminating connection due to administrator command"). It is logged here,
   * and the connection is closed instead of returned when it is released.
   */
  private async checkout(pool: Pool = this.pool): Promise<PoolClient> {
    const client = await pool.connect();
    let failed = false;
    const onError = (err: Error) => {
      failed = true;
      this.logger.warn({ err }, 'a database connection in use failed; it will be closed');
    };
    client.on('error', onError);
    const release = client.release.bind(client);
    client.release = (broken?: boolean | Error) => {
      client.off('error', onError);
      return release(failed || broken);
    };
    return client;
  }

  /** Maps rows of `entity`'s table (as `to_jsonb(row)`) to the entity's shape, and writes them. */
  rows<T extends ObjectLiteral>(entity: EntityTarget<T>): EntityRows<T> {
    return new EntityRows<T>(this.db.getMetadata(entity));
  }
}

const TIMESTAMP_TYPES = new Set<unknown>([
  'timestamptz',
  'timestamp with time zone',
  'timestamp',
  'timestamp without time zone',
  'date',
  Date,
]);

/**
 * An entity's table in raw SQL: whole rows come back as `to_jsonb(row)` and are turned into the entity's
 * shape (property names, Dates) from TypeORM's column metadata, so a column added to the entity needs no
 * change to the statements.
 */
export class EntityRows<T extends ObjectLiteral> {
  readonly table: string;
  private readonly columns: { property: string; column: string; date: boolean; generated: boolean }[];

  constructor(meta: EntityMetadata) {
    this.table = meta.tableName;
    this.columns = meta.columns.map((c) => ({
      property: c.propertyName,
      column: c.databaseName,
      date: TIMESTAMP_TYPES.has(c.type),
      generated: c.isGenerated,
    }));
  }

  /** A row as `to_jsonb(row)` returned it, in the entity's shape. */
  fromJson(json: Record<string, unknown>): T {
    const out: Record<string, unknown> = {};
    for (const c of this.columns) {
      const v = json[c.column];
      out[c.property] = c.date && typeof v === 'string' ? new Date(v) : v;
    }
    return out as T;
  }

  /**
   * `INSERT INTO <table> AS <alias> (...) VALUES (...) RETURNING to_jsonb(<alias>)` for the defined
   * properties of `values` (generated columns and undefined properties are left to their defaults).
   */
  insert(values: Partial<T>, alias = 't'): { text: string; params: unknown[] } {
    const names: string[] = [];
    const params: unknown[] = [];
    for (const c of this.columns) {
      const v = (values as Record<string, unknown>)[c.property];
      if (c.generated || v === undefined) continue;
      names.push(`"${c.column}"`);
      params.push(v);
    }
    const placeholders = params.map((_, i) => `$${i + 1}`).join(', ');
    return {
      text: `INSERT INTO ${this.table} AS ${alias} (${names.join(', ')}) VALUES (${placeholders}) RETURNING to_jsonb(${alias}) AS row`,
      params,
    };
  }

  /**
   * The same insert as a part of a bigger statement: `INSERT INTO <table> AS <alias> (...) SELECT ... FROM <from>`,
   * one row per row of `from` (none when it has none), the defined properties of `values` as parameters numbered
   * from `first` (Postgres types them by their columns), and `computed` columns as SQL expressions over `from`.
   * It returns `returning` (e.g. the generated id).
   */
  insertSelect(
    values: Partial<T>,
    opts: { alias: string; from: string; computed: Record<string, string>; first: number; returning: string },
  ): { text: string; params: unknown[] } {
    const names: string[] = [];
    const exprs: string[] = [];
    const params: unknown[] = [];
    for (const c of this.columns) {
      const computed = opts.computed[c.column];
      const v = (values as Record<string, unknown>)[c.property];
      if (computed === undefined && (c.generated || v === undefined)) continue;
      names.push(`"${c.column}"`);
      if (computed !== undefined) exprs.push(computed);
      else {
        params.push(v);
        exprs.push(`$${opts.first + params.length - 1}`);
      }
    }
    return {
      text: `INSERT INTO ${this.table} AS ${opts.alias} (${names.join(', ')}) SELECT ${exprs.join(', ')} FROM ${opts.from} RETURNING ${opts.returning}`,
      params,
    };
  }
}
