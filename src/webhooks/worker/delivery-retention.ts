import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryRunner } from 'typeorm';
import { AppConfig } from '../../config';
import { DeliveryMetrics } from '../webhook-metrics';

export const RETENTION_INTERVAL_MS = 10 * 60_000;
/**
 * Day partitions kept ready ahead of time, so a worker that is down for a while does not leave rows to the default
 * partition.
 */
export const PARTITION_DAYS_AHEAD = 3;
/**
 * Events are kept a day longer than deliveries: a delivery made pending again by hand must still find its event's
 * payload.
 */
const EVENT_EXTRA_DAYS = 1;
/**
 * The longest any retention statement waits for a table lock; it gives up and tries again on the next pass.
 * While a partition drop waits for its brief exclusive lock on the parent, statements on that table queue
 * behind it, so this bounds the stall the dispatcher can see.
 */
const LOCK_TIMEOUT = '1s';
const DELETE_BATCH = 5000;
const LOCK_KEY = 4242_0003;
const DAY_MS = 86_400_000;

export type LogTable = 'webhook_deliveries' | 'webhook_delivery_attempts' | 'outbox_events';
export interface RetentionPass {
  partitionsCreated: number;
  partitionsDropped: string[];
  removed: Record<LogTable, number>;
}

/**
 * Keeps the delivery log to DELIVERY_RETENTION_DAYS: drops the day partitions of delivered and failed
 * deliveries and their attempts once the whole day is past retention (pending deliveries live in the open
 * partition and are never touched), drops days of outbox events once relayed and no pending delivery still
 * reads them, and trims the default partitions (rows of days that had no partition) in small batches. It also
 * creates the coming days' partitions. Every statement runs in its own short transaction with a lock timeout,
 * so it never holds or waits for a table lock for long. One worker at a time (advisory lock).
 */
@Injectable()
export class DeliveryRetention implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryRetention.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
    private readonly metrics: DeliveryMetrics,
  ) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      if (this.running) return;
      this.running = this.run()
        .catch((err) => this.logger.warn({ err }, 'retention pass failed; will retry'))
        .finally(() => (this.running = undefined));
    };
    // the first pass a minute after start (partitions for the coming days exist since the migration)
    setTimeout(tick, 60_000).unref();
    this.timer = setInterval(tick, RETENTION_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass; null when another process is doing one. */
  async run(now = new Date()): Promise<RetentionPass | null> {
    const qr = this.db.createQueryRunner();
    await qr.connect();
    try {
      const [{ locked }] = await qr.query(`SELECT pg_try_advisory_lock($1) AS locked`, [LOCK_KEY]);
      if (!locked) return null;
      try {
        return await this.pass(qr, now);
      } finally {
        await qr.query(`SELECT pg_advisory_unlock($1)`, [LOCK_KEY]);
      }
    } finally {
      await qr.release();
    }
  }

  private async pass(qr: QueryRunner, now: Date): Promise<RetentionPass> {
    const result: RetentionPass = {
      partitionsCreated: 0,
      partitionsDropped: [],
      removed: { webhook_deliveries: 0, webhook_delivery_attempts: 0, outbox_events: 0 },
    };
    const today = utcDay(now);
    const [{ made }] = await short(qr, (q) =>
      q.query(`SELECT delivery_log_ensure_partitions($1::date, $2::date) AS made`, [
        isoDay(today - DAY_MS),
        isoDay(today + PARTITION_DAYS_AHEAD * DAY_MS),
      ]),
    );
    result.partitionsCreated = made;

    const cutoff = now.getTime() - this.config.webhooks.retentionDays * DAY_MS;
    const eventCutoff = cutoff - EVENT_EXTRA_DAYS * DAY_MS;
    for (const p of await this.dayPartitions(qr)) {
      const end = p.day + DAY_MS;
      if (p.table === 'outbox_events') {
        if (end > eventCutoff || (await this.eventsStillNeeded(qr, p.name))) continue;
      } else if (end > cutoff) continue;
      // counted before it goes (no lock needed); rows cannot enter a past day's partition any more
      const [{ n }] = await qr.query(`SELECT count(*)::int AS n FROM ${quote(p.name)}`);
      const dropped = await short(qr, async (q) => {
        await q.query(`ALTER TABLE ${p.table} DETACH PARTITION ${quote(p.name)}`);
        await q.query(`DROP TABLE ${quote(p.name)}`);
      }).then(
        () => true,
        (err) => (this.logger.warn({ err, partition: p.name }, 'could not drop a partition now; next pass'), false),
      );
      if (!dropped) continue;
      result.partitionsDropped.push(p.name);
      result.removed[p.table] += n;
    }

    const iso = new Date(cutoff).toISOString();
    result.removed.webhook_deliveries += await this.trimDefault(
      qr,
      'webhook_deliveries_default',
      `finished_at < $1`,
      iso,
    );
    result.removed.webhook_delivery_attempts += await this.trimDefault(
      qr,
      'webhook_delivery_attempts_default',
      `delivery_finished_at < $1`,
      iso,
    );
    result.removed.outbox_events += await this.trimDefault(
      qr,
      'outbox_events_default',
      `occurred_at < $1 AND relayed_at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhook_deliveries_open d WHERE d.event_id = t.id)`,
      new Date(eventCutoff).toISOString(),
    );
    for (const [table, n] of Object.entries(result.removed)) if (n > 0) this.metrics.retentionRemoved(table, n);
    if (result.partitionsDropped.length || Object.values(result.removed).some((n) => n > 0))
      this.logger.log(result, 'retention pass removed old delivery log rows');
    return result;
  }

  /** The day partitions of the three log tables, oldest first. */
  private async dayPartitions(qr: QueryRunner): Promise<{ table: LogTable; name: string; day: number }[]> {
    const rows: { parent: LogTable; name: string }[] = await qr.query(
      `SELECT p.relname AS parent, c.relname AS name
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relname IN ('outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts')
          AND p.relnamespace = current_schema()::regnamespace AND c.relname ~ '_p[0-9]{8}$'`,
    );
    return rows
      .map((r) => {
        const d = r.name.slice(-8);
        return {
          table: r.parent,
          name: r.name,
          day: Date.UTC(Number(d.slice(0, 4)), Number(d.slice(4, 6)) - 1, Number(d.slice(6, 8))),
        };
      })
      .sort((a, b) => a.day - b.day);
  }

  /** A day of events stays while one of them is unrelayed or a pending delivery still needs its payload. */
  private async eventsStillNeeded(qr: QueryRunner, partition: string): Promise<boolean> {
    const [{ needed }] = await qr.query(
      `SELECT EXISTS (SELECT 1 FROM ${quote(partition)} WHERE relayed_at IS NULL)
           OR EXISTS (SELECT 1 FROM webhook_deliveries_open d JOIN ${quote(partition)} e ON e.id = d.event_id) AS needed`,
    );
    return needed;
  }

  /** Deletes matching rows of a default partition in batches of DELETE_BATCH, each its own short transaction. */
  private async trimDefault(qr: QueryRunner, table: string, where: string, bound: string): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await short(qr, async (q) => {
        const [, count] = await q.query(
          `DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT t.ctid FROM ${table} t WHERE ${where} LIMIT ${DELETE_BATCH}))`,
          [bound],
        );
        return count as number;
      });
      total += n;
      if (n < DELETE_BATCH) return total;
    }
  }
}

/** Runs fn in its own transaction whose lock waits end after LOCK_TIMEOUT. */
async function short<T>(qr: QueryRunner, fn: (q: QueryRunner) => Promise<T>): Promise<T> {
  await qr.startTransaction();
  try {
    await qr.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    const out = await fn(qr);
    await qr.commitTransaction();
    return out;
  } catch (err) {
    await qr.rollbackTransaction().catch(() => undefined);
    throw err;
  }
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function utcDay(d: Date): number {
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
