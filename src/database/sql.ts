import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Pool, PoolClient } from 'pg';
import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/** What runs statements: the pool (Sql) or one transaction's connection (SqlTransaction). */
export interface Queryable {
  /** The rows of `text` with `params`. */
  query<R = Record<string, any>>(text: string, params?: unknown[]): Promise<R[]>;
}

/** A transaction opened by Sql.transaction: statements run on its one connection. */
export interface SqlTransaction extends Queryable {
  /** How many rows `text` changed (UPDATE, DELETE, INSERT without RETURNING). */
  execute(text: string, params?: unknown[]): Promise<number>;
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

/**
 * Raw SQL on the application's own pool (the one TypeORM uses, whose connections prepare every
 * parameterized statement once: see PreparingClient), for every statement of the dispatcher and the hot
 * paths of the portal: one round trip per statement and nothing else.
 */
@Injectable()
export class Sql implements SqlTransaction {
  private readonly logger = new Logger(Sql.name);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get pool(): Pool {
    return (this.db.driver as unknown as { master: Pool }).master;
  }

  async query<R = Record<string, any>>(text: string, params: unknown[] = []): Promise<R[]> {
    return (await this.pool.query(text, params)).rows;
  }

  async execute(text: string, params: unknown[] = []): Promise<number> {
    return (await this.pool.query(text, params)).rowCount ?? 0;
  }

  /** Runs `work` between BEGIN and COMMIT (ROLLBACK if it throws) on one connection. */
  async transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const tx: SqlTransaction = {
        query: async (text, params = []) => (await client.query(text, params)).rows,
        execute: async (text, params = []) => (await client.query(text, params)).rowCount ?? 0,
      };
      const result = await work(tx);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => (broken = true));
      throw err;
    } finally {
      // a connection that could not even roll back is not given to anyone else
      client.release(broken);
    }
  }

  /**
   * Runs `work` while this process holds the session-level advisory lock `key`, on a connection of its own that
   * is idle (no transaction open) meanwhile; null, without running it, when another session holds the lock. The
   * work's own statements go through the pool, so a pass that talks to Redis keeps no transaction open.
   */
  async withLock<T>(key: number, work: (session: SqlTransaction) => Promise<T>): Promise<T | null> {
    const client: PoolClient = await this.pool.connect();
    let broken = false;
    try {
      const [{ locked }] = (await client.query(`SELECT pg_try_advisory_lock($1) AS locked`, [key])).rows;
      if (!locked) return null;
      const session: SqlTransaction = {
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
}
