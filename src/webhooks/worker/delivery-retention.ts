import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../../config';
import { DeliveryLogStore, LOG_TABLES, LogTable } from '../delivery-log.store';
import { DeliveryMetrics } from '../webhook-metrics';
import { PeriodicRunner, PeriodicTask } from '../../common/periodic/periodic.runner';

export const RETENTION_INTERVAL_MS = 10 * 60_000;
/**
 * Day partitions kept ready ahead of time, so a worker that is down for a while does not leave rows to the default
 * partition.
 */
export const PARTITION_DAYS_AHEAD = 3;
const LOCK_KEY = 4242_0003;
const DAY_MS = 86_400_000;

export type { LogTable };
export interface RetentionPass {
  partitionsCreated: number;
  partitionsDropped: string[];
  removed: Record<LogTable, number>;
  /** Days past retention that still hold pending deliveries or unrelayed events, and wait for them. */
  blocked: { day: string; pendingDeliveries: number; unrelayedEvents: number }[];
}

/**
 * Keeps the delivery log to DELIVERY_RETENTION_DAYS, counted from the time of the event: once a whole day is
 * past retention, its outbox events, deliveries and attempts (all partitioned by the event's time) are dropped
 * together, a brief catalog lock instead of row-by-row deletes. A day that still holds a pending delivery (a
 * retry, a redelivery by hand) or an unrelayed event waits for it: the gauge webhook_retention_blocked_days and
 * a log line naming the day say so. Rows of days that had no partition sit in the default partitions, which are
 * trimmed in small batches. Each pass also creates the coming days' partitions. One worker at a time.
 */
@Injectable()
export class DeliveryRetention implements OnApplicationBootstrap {
  private readonly logger = new Logger(DeliveryRetention.name);
  private now = () => new Date();
  private readonly task: PeriodicTask<RetentionPass> = {
    name: 'delivery log retention',
    intervalMs: RETENTION_INTERVAL_MS,
    // the first pass a minute after start (partitions for the coming days exist since the migration)
    firstAfterMs: 60_000,
    lock: LOCK_KEY,
    run: () => this.pass(this.now()),
  };

  constructor(
    private readonly config: AppConfig,
    private readonly log: DeliveryLogStore,
    private readonly metrics: DeliveryMetrics,
    private readonly runner: PeriodicRunner,
  ) {}

  onApplicationBootstrap(): void {
    this.runner.schedule(this.task);
  }

  /** One pass; null when another pass (of this or another process) is running. */
  async run(now = new Date()): Promise<RetentionPass | null> {
    this.now = () => now;
    try {
      return await this.runner.runOnce(this.task);
    } finally {
      this.now = () => new Date();
    }
  }

  private async pass(now: Date): Promise<RetentionPass> {
    const result: RetentionPass = {
      partitionsCreated: 0,
      partitionsDropped: [],
      removed: { webhook_deliveries: 0, webhook_delivery_attempts: 0, outbox_events: 0 },
      blocked: [],
    };
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    result.partitionsCreated = await this.log.ensurePartitions(
      isoDay(today - DAY_MS),
      isoDay(today + PARTITION_DAYS_AHEAD * DAY_MS),
    );

    const cutoff = now.getTime() - this.config.webhooks.retentionDays * DAY_MS;
    for (const day of await this.log.days()) {
      if (day.start + DAY_MS > cutoff) break;
      const outcome = await this.log.dropDay(day).catch((err) => {
        this.logger.warn({ err, day: day.day }, 'could not drop a day of the delivery log now; next pass');
        return null;
      });
      if (outcome === null) continue;
      if (!outcome.dropped) {
        const { pendingDeliveries, unrelayedEvents } = outcome;
        result.blocked.push({ day: day.day, pendingDeliveries, unrelayedEvents });
        this.logger.warn(
          { day: day.day, pendingDeliveries, unrelayedEvents },
          'a day of the delivery log is past retention but still holds pending work: kept until it is done',
        );
        continue;
      }
      for (const t of LOG_TABLES) {
        result.removed[t] += outcome.removed[t];
        if (day.partitions[t]) result.partitionsDropped.push(day.partitions[t]);
      }
    }

    for (const t of LOG_TABLES) result.removed[t] += await this.log.trimDefault(t, new Date(cutoff));
    this.metrics.retentionBlocked(result.blocked.length);
    for (const [table, n] of Object.entries(result.removed)) if (n > 0) this.metrics.retentionRemoved(table, n);
    if (result.partitionsDropped.length || Object.values(result.removed).some((n) => n > 0))
      this.logger.log(result, 'retention pass removed old delivery log rows');
    return result;
  }
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
