import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { Counter, Gauge, Histogram } from 'prom-client';
import { DataSource } from 'typeorm';
import { MetricsRegistry } from '../metrics/metrics.registry';
import { DELIVERY_QUEUE } from './delivery.queue';

/** Counters of this worker process: attempts by outcome and their latency, rows removed by retention. */
@Injectable()
export class DeliveryMetrics {
  private readonly attempts: Counter<'outcome' | 'error'>;
  private readonly latency: Histogram<'outcome'>;
  private readonly disables: Counter<'reason'>;
  private readonly holds: Counter;
  private readonly retention: Counter<'table'>;
  private readonly refused: Counter;

  constructor(registry: MetricsRegistry) {
    this.refused = new Counter({
      name: 'webhook_filter_refused_total',
      help: "Deliveries not created because the webhook's filter refused the event (one per event and webhook)",
      registers: [registry],
    });
    this.disables = new Counter({
      name: 'webhooks_disabled_total',
      help: 'Webhooks this process switched off, by reason (gone: 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER)',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.holds = new Counter({
      name: 'webhook_rate_limited_total',
      help: 'Times a delivery was put back to wait for its turn under its webhook rate limit (not an attempt)',
      registers: [registry],
    });
    this.attempts = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts by resulting delivery status (delivered, pending = will retry, failed) and error kind',
      labelNames: ['outcome', 'error'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Duration of delivery attempts',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
    this.retention = new Counter({
      name: 'webhook_retention_removed_rows_total',
      help: 'Rows the delivery log retention removed (DELIVERY_RETENTION_DAYS), by table',
      labelNames: ['table'],
      registers: [registry],
    });
  }

  filterRefused(count: number): void {
    if (count > 0) this.refused.inc(count);
  }

  retentionRemoved(table: string, rows: number): void {
    this.retention.inc({ table }, rows);
  }

  disabled(reason: string): void {
    this.disables.inc({ reason });
  }

  rateLimited(): void {
    this.holds.inc();
  }

  attempt(outcome: string, error: string | null, durationMs: number): void {
    this.attempts.inc({ outcome, error: error ?? 'none' });
    this.latency.observe({ outcome }, durationMs / 1000);
  }
}

/** Gauges read at scrape time (every role): queue depth from Redis, the backlog from Postgres. */
@Injectable()
export class DispatchGauges implements OnModuleInit {
  constructor(
    private readonly registry: MetricsRegistry,
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(DELIVERY_QUEUE) private readonly deliveries: Queue,
  ) {}

  onModuleInit(): void {
    const queue = this.deliveries;
    new Gauge({
      name: 'webhook_queue_depth',
      help: 'Jobs in the queue by state',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
        for (const [state, n] of Object.entries(counts)) this.set({ queue: DELIVERY_QUEUE, state }, n);
      },
    });
    const db = this.db;
    new Gauge({
      name: 'webhook_oldest_pending_delivery_age_seconds',
      help: 'Age of the oldest delivery still pending (0 when none)',
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(
          `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM webhook_deliveries WHERE finished_at = 'infinity' AND status = 'pending'`,
        );
        this.set(Number(row.age));
      },
    });
    new Gauge({
      name: 'webhook_deliveries_rate_limited',
      help: 'Pending deliveries waiting for their turn under their webhook rate limit',
      registers: [this.registry],
      // pending work lives in the open partition (finished_at 'infinity'): naming it keeps the scan there
      collect: async function (this: Gauge) {
        const [row] = await db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE finished_at = 'infinity' AND held = 'rate_limit' AND status = 'pending'`,
        );
        this.set(row.n);
      },
    });
    new Gauge({
      name: 'webhook_ordered_blocked',
      help: 'Ordered webhooks whose oldest pending delivery has failed at least once while later deliveries wait behind it',
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(
          `SELECT count(*)::int AS n FROM webhooks w
             CROSS JOIN LATERAL (SELECT attempt_count, event_seq FROM webhook_deliveries
                                  WHERE finished_at = 'infinity' AND webhook_id = w.id AND status = 'pending' ORDER BY event_seq LIMIT 1) head
            WHERE w.ordered AND w.active AND head.attempt_count > 0
              AND EXISTS (SELECT 1 FROM webhook_deliveries b WHERE b.finished_at = 'infinity' AND b.webhook_id = w.id AND b.status = 'pending' AND b.event_seq > head.event_seq)`,
        );
        this.set(row.n);
      },
    });
    new Gauge({
      name: 'webhooks_disabled',
      help: 'Inactive webhooks by reason (gone, failing, manual)',
      labelNames: ['reason'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const rows: { reason: string; n: number }[] = await db.query(
          `SELECT coalesce(disabled_reason, 'manual') AS reason, count(*)::int AS n FROM webhooks WHERE NOT active GROUP BY 1`,
        );
        this.reset();
        for (const reason of ['gone', 'failing', 'manual'])
          this.set({ reason }, rows.find((r) => r.reason === reason)?.n ?? 0);
      },
    });
    new Gauge({
      name: 'outbox_unrelayed_events',
      help: 'Events committed but not yet turned into deliveries',
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE relayed_at IS NULL`);
        this.set(row.n);
      },
    });
  }
}
