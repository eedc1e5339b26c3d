import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Pool, PoolClient } from 'pg';
import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';

/** A transaction opened by Sql.transaction: statements run on its one connection. */
export interface SqlTransaction {
  /** The rows of `text` with `params`. */
  query<R = Record<string, any>>(text: string, params?: unknown[]): Promise<R[]>;
}

/**
 * Raw SQL on the application's own pool (the one TypeORM uses, so its connections prepare every
 * parameterized statement once), for hot paths where TypeORM's query runners and hydration cost more
 * than the statement: one round trip per statement and nothing else.
 */
@Injectable()
export class Sql {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get pool(): Pool {
    return (this.db.driver as unknown as { master: Pool }).master;
  }

  async query<R = Record<string, any>>(text: string, params: unknown[] = []): Promise<R[]> {
    return (await this.pool.query(text, params)).rows;
  }

  /** Runs `work` between BEGIN and COMMIT (ROLLBACK if it throws) on one connection. */
  async transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const tx: SqlTransaction = { query: async (text, params = []) => (await client.query(text, params)).rows };
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
