import { Injectable } from '@nestjs/common';
import { Sql, SqlTransaction } from '../database/sql';

/** The tables of the delivery log, all partitioned by day of the event's time. */
export type LogTable = 'outbox_events' | 'webhook_deliveries' | 'webhook_delivery_attempts';
export const LOG_TABLES: LogTable[] = ['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts'];

/** One UTC day of the log: the partitions that hold it (a table may lack one: its rows then sit in its default). */
export interface LogDay {
  day: string;
  /** Midnight UTC starting it, epoch milliseconds. */
  start: number;
  partitions: Partial<Record<LogTable, string>>;
}

/** What dropping a day did: dropped (rows counted before), or left because work in it is not done. */
export type DropOutcome =
  | { dropped: true; removed: Record<LogTable, number> }
  | { dropped: false; pendingDeliveries: number; unrelayedEvents: number };

/**
 * The longest a retention statement waits for a table lock; it gives up and tries again on the next pass.
 * While a partition drop waits for its brief exclusive lock on the parent, statements on that table queue
 * behind it, so this bounds the stall the dispatcher can see.
 */
const LOCK_TIMEOUT = '1s';
const DELETE_BATCH = 5000;

/**
 * Trims of the default partitions (rows of days that had no partition): past `$1`, done (no pending delivery
 * needs them), at most DELETE_BATCH rows a statement.
 */
const TRIM: Record<LogTable, string> = {
  outbox_events: `occurred_at < $1 AND relayed_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = t.id AND d.event_occurred_at = t.occurred_at AND d.status = 'pending')`,
  webhook_deliveries: `event_occurred_at < $1 AND status <> 'pending'`,
  webhook_delivery_attempts: `event_occurred_at < $1
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = t.delivery_id AND d.event_occurred_at = t.event_occurred_at AND d.status = 'pending')`,
};

/**
 * The purge of a deleted webhook's history ($1 the webhook, $2 the batch): its pending deliveries first (so no gauge
 * counts them for long), then the others, then its attempts (the two partial indexes on the webhook together hold
 * every attempt). Each step reads a batch of keys from an index on the webhook, grouped by the partition that holds
 * them; each group is then deleted from that partition, named, by its primary key's first column. (Deleting through
 * the partitioned table read every partition, and where Postgres underestimated the webhook's rows it took the
 * `stats` index for the keys, walking the webhook's whole range once per key: seconds a batch.)
 */
const purgeStep = (table: LogTable, keys: string, key: string) => ({
  table,
  key,
  select: `SELECT b.tableoid::regclass::text AS partition, array_agg(b.${key}) AS keys FROM (${keys}) b GROUP BY 1`,
});
const PURGE = [
  purgeStep(
    'webhook_deliveries',
    `SELECT tableoid, id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' LIMIT $2`,
    'id',
  ),
  purgeStep('webhook_deliveries', `SELECT tableoid, id FROM webhook_deliveries WHERE webhook_id = $1 LIMIT $2`, 'id'),
  purgeStep(
    'webhook_delivery_attempts',
    `(SELECT tableoid, delivery_id FROM webhook_delivery_attempts WHERE webhook_id = $1 AND error IS NULL LIMIT $2)
     UNION ALL
     (SELECT tableoid, delivery_id FROM webhook_delivery_attempts WHERE webhook_id = $1 AND error IS NOT NULL LIMIT $2)`,
    'delivery_id',
  ),
];

/** What one batch of a deleted webhook's purge removed; `done` when nothing of its history is left. */
export interface PurgeBatch {
  deliveries: number;
  attempts: number;
  done: boolean;
}

/**
 * The partitions of the delivery log (outbox events, deliveries, attempts): the statements of retention, which
 * creates the coming days and drops whole past ones, and of the purge of deleted webhooks' history.
 */
@Injectable()
export class DeliveryLogStore {
  constructor(private readonly sql: Sql) {}

  /** Creates the missing day partitions of [from, to] (YYYY-MM-DD); answers how many. */
  async ensurePartitions(from: string, to: string): Promise<number> {
    return this.short(async (tx) => {
      const [{ made }] = await tx.query<{ made: number }>(
        `SELECT delivery_log_ensure_partitions($1::date, $2::date) AS made`,
        [from, to],
      );
      return made;
    });
  }

  /** The days that have partitions, oldest first. */
  async days(): Promise<LogDay[]> {
    const rows = await this.sql.query<{ parent: LogTable; name: string }>(
      `SELECT p.relname AS parent, c.relname AS name
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname = ANY($1) AND p.relnamespace = current_schema()::regnamespace AND c.relname ~ '_p[0-9]{8}$'`,
      [LOG_TABLES],
    );
    const days = new Map<string, LogDay>();
    for (const r of rows) {
      const d = r.name.slice(-8);
      const day = `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6, 8)}`;
      let entry = days.get(day);
      if (!entry) {
        entry = { day, start: Date.parse(`${day}T00:00:00Z`), partitions: {} };
        days.set(day, entry);
      }
      entry.partitions[r.parent] = r.name;
    }
    return [...days.values()].sort((a, b) => a.start - b.start);
  }

  /**
   * Drops a day's partitions of all three tables together, unless a delivery of that day is still pending or an
   * event of it unrelayed (then nothing is dropped: the day waits for its work). The check and the drop are one
   * short transaction that holds the tables' locks, so no redelivery can make a delivery of the day pending in
   * between; rows are counted beforehand (nothing but finishing work can add any to a done day).
   */
  async dropDay(day: LogDay): Promise<DropOutcome> {
    const removed = { outbox_events: 0, webhook_deliveries: 0, webhook_delivery_attempts: 0 };
    for (const t of LOG_TABLES) {
      const p = day.partitions[t];
      if (p) [{ n: removed[t] }] = await this.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quote(p)}`);
    }
    return this.short(async (tx) => {
      await tx.query(`LOCK TABLE ${LOG_TABLES.join(', ')} IN ACCESS EXCLUSIVE MODE`);
      const deliveries = day.partitions.webhook_deliveries;
      const events = day.partitions.outbox_events;
      const [work] = await tx.query<{ pending: number; unrelayed: number }>(
        `SELECT ${deliveries ? `(SELECT count(*) FROM ${quote(deliveries)} WHERE status = 'pending')` : '0'}::int AS pending,
                ${events ? `(SELECT count(*) FROM ${quote(events)} WHERE relayed_at IS NULL)` : '0'}::int AS unrelayed`,
      );
      if (work.pending > 0 || work.unrelayed > 0)
        return { dropped: false, pendingDeliveries: work.pending, unrelayedEvents: work.unrelayed };
      for (const t of LOG_TABLES) {
        const p = day.partitions[t];
        if (!p) continue;
        await tx.query(`ALTER TABLE ${t} DETACH PARTITION ${quote(p)}`);
        await tx.query(`DROP TABLE ${quote(p)}`);
      }
      return { dropped: true, removed };
    });
  }

  /** Deletes the done rows before `before` from a table's default partition, in short batches; answers how many. */
  async trimDefault(table: LogTable, before: Date): Promise<number> {
    const part = `${table}_default`;
    let total = 0;
    for (;;) {
      const n = await this.short((tx) =>
        tx.execute(
          `DELETE FROM ${part} WHERE ctid = ANY (ARRAY(SELECT t.ctid FROM ${part} t WHERE ${TRIM[table]} LIMIT ${DELETE_BATCH}))`,
          [before],
        ),
      );
      total += n;
      if (n < DELETE_BATCH) return total;
    }
  }

  /**
   * One batch of the purge of deleted webhook `webhookId`: the keys of at most `batch` rows of the first of its
   * history's steps (PURGE) that finds any, then a delete from each partition that holds some, each statement a
   * transaction of its own. (A key read here belongs to the webhook, and a row once in a partition stays there.)
   */
  async purgeBatch(webhookId: string, batch: number): Promise<PurgeBatch> {
    for (const step of PURGE) {
      const groups = await this.sql.query<{ partition: string; keys: string[] }>(step.select, [webhookId, batch]);
      if (groups.length === 0) continue;
      let n = 0;
      for (const g of groups)
        n += await this.sql.execute(`DELETE FROM ${g.partition} WHERE ${step.key} = ANY ($1::uuid[])`, [g.keys]);
      const deliveries = step.table === 'webhook_deliveries' ? n : 0;
      return { deliveries, attempts: n - deliveries, done: false };
    }
    return { deliveries: 0, attempts: 0, done: true };
  }

  /** Runs `work` in its own transaction whose lock waits end after LOCK_TIMEOUT. */
  private short<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.sql.transaction(async (tx) => {
      await tx.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
      return work(tx);
    });
  }
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
