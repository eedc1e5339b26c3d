import { Injectable, OnModuleInit } from '@nestjs/common';
import { pgCode, PG_ERRORS, Sql } from './sql';

const DAY_KEY = /^(\d{4})-(\d{2})-(\d{2})T/;

/**
 * The day partitions that exist of the tables partitioned by an event's time (the outbox, deliveries, attempts), so
 * that the hot statements can name the partition that holds their rows: Postgres then plans them (once per
 * connection, as prepared statements) for that one plain table, instead of planning the partitioned table at every
 * call or locking all of its partitions at every call. A row of a day
 * without a partition (it sits in the default one) is addressed through the partitioned table, as is any day
 * not known yet; the list is read at start, again in the background when a day is missing (at most every few
 * seconds), and at once when a named partition turns out to be gone (dropped by retention: its rows were done).
 */
@Injectable()
export class DayPartitions implements OnModuleInit {
  private names = new Set<string>();
  private readAt = 0;
  private reading?: Promise<void>;

  constructor(private readonly sql: Sql) {}

  /** The list, read before the process serves (migrations have run by then); should that fail, on first use. */
  async onModuleInit(): Promise<void> {
    await this.read().catch(() => undefined);
  }

  /** The partition of `parent` holding the day of `at` (a key as keyText writes it, or a time), else `parent`. */
  async of(parent: string, at: string | Date): Promise<string> {
    const m = DAY_KEY.exec(typeof at === 'string' ? at : at.toISOString());
    if (!m) return parent;
    const name = `${parent}_p${m[1]}${m[2]}${m[3]}`;
    if (this.names.has(name)) return name;
    // read again in the background, never waited for: the caller may hold a pooled connection (a transaction writing
    // its events), and with every connection so held, waiting here for one more would wait for ever. The partitioned
    // table takes the rows meanwhile.
    if (Date.now() - this.readAt > 5000) this.read().catch(() => undefined);
    return parent;
  }

  /**
   * Builds a statement with the partitions' names and runs it; should a named partition be gone, once more with
   * the list read afresh. `inTransaction`: no second try (the failed statement aborted the transaction).
   */
  async run<T>(
    build: (names: DayPartitions) => Promise<string>,
    exec: (text: string) => Promise<T>,
    inTransaction = false,
  ): Promise<T> {
    const text = await build(this);
    try {
      return await exec(text);
    } catch (err) {
      if (inTransaction || pgCode(err) !== PG_ERRORS.undefinedTable) throw err;
      this.readAt = 0;
      await this.read();
      return exec(await build(this));
    }
  }

  private read(): Promise<void> {
    if (!this.reading) this.readAt = Date.now(); // at most one read every few seconds, whether or not it succeeds
    this.reading ??= this.sql
      .query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
          WHERE i.inhparent IN ('outbox_events'::regclass, 'webhook_deliveries'::regclass, 'webhook_delivery_attempts'::regclass)`,
      )
      .then((rows) => {
        this.names = new Set(rows.map((r) => r.name));
        this.readAt = Date.now();
      })
      .finally(() => (this.reading = undefined));
    return this.reading;
  }
}
