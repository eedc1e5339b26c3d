import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Counter, Gauge, Histogram } from 'prom-client';
import { withDeadline } from '../common/deadline';
import { ScanOptions, Sql } from '../database/sql';
import { OutboxStore } from '../events/outbox.store';
import { MetricsRegistry } from '../metrics/metrics.registry';
import { AttemptError, AttemptOutcome, NO_ERROR } from './attempt-outcome';
import { DELIVERY_QUEUE } from './delivery.queue';
import { DISABLED_REASONS, DisabledReason } from './operational-events';
import { DeliveryStore } from './delivery.store';
import { WebhookStore } from './webhook.store';

/** The tables the purge of deleted webhooks removes rows from. */
const PURGED_TABLES = ['webhook_deliveries', 'webhook_delivery_attempts', 'webhooks'] as const;

/** How long a scrape waits for the queue's counts; past it (Redis unreachable) the depth is left out of that scrape. */
const QUEUE_DEPTH_WAIT_MS = 1000;
/**
 * How long a scrape waits for a gauge read from Postgres. Unanswered (the database down or hung), the gauge reads
 * NaN in that scrape (unknown: neither a stale value nor a reassuring 0; one with labels is left out, as the queue
 * depth is without Redis), rather than the whole scrape failing after the pool's 10 s wait for a connection: the HTTP
 * and process metrics of an outage are what one needs to see. Postgres ends the statement then too (its
 * statement_timeout): one left running behind a lock would hold its pooled connection, and a few scrapes would take
 * the pool from the users' requests.
 */
const DATABASE_GAUGE_WAIT_MS = 1000;

/** The value `read` gives within DATABASE_GAUGE_WAIT_MS, or undefined (the gauge then has no sample). */
async function bounded<T>(read: () => Promise<T>): Promise<T | undefined> {
  return withDeadline(read(), DATABASE_GAUGE_WAIT_MS).catch(() => undefined);
}

/** A number read within DATABASE_GAUGE_WAIT_MS, or NaN (unknown) in this scrape. */
async function boundedNumber(read: () => Promise<number>): Promise<number> {
  return (await bounded(read)) ?? NaN;
}

/**
 * The dispatcher's counters, defined once for every role: attempts by outcome and their latency, rate-limit holds
 * and rows removed by retention (worker), and switch-offs (worker: gone, failing; API: manual). Each process counts
 * what it did itself.
 */
@Injectable()
export class DeliveryMetrics {
  private readonly attempts: Counter<'outcome' | 'error'>;
  private readonly latency: Histogram<'outcome'>;
  private readonly disables: Counter<'reason'>;
  private readonly holds: Counter;
  private readonly retention: Counter<'table'>;
  private readonly purge: Counter<'table'>;
  private readonly blocked: Gauge;
  private readonly refused: Counter;

  constructor(registry: MetricsRegistry) {
    this.refused = new Counter({
      name: 'webhook_filter_refused_total',
      help: "Deliveries not created because the webhook's filter refused the event (one per event and webhook)",
      registers: [registry],
    });
    this.disables = new Counter({
      name: 'webhooks_disabled_total',
      help: 'Webhooks this process switched off, by reason (gone: 410; failing: every attempt failed for WEBHOOK_DISABLE_AFTER; manual: PUT Active false)',
      labelNames: ['reason'],
      registers: [registry],
    });
    // every reason from the start, so a rate over the first switch-off has a series to start from
    for (const reason of DISABLED_REASONS) this.disables.inc({ reason }, 0);
    this.holds = new Counter({
      name: 'webhook_rate_limited_total',
      help: 'Times a delivery was put back to wait for its turn under its webhook rate limit (not an attempt)',
      registers: [registry],
    });
    this.attempts = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts by outcome (delivered, retry, failed, webhook_disabled, superseded) and error (timeout, connection, blocked_address, http_status, none)',
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
    this.purge = new Counter({
      name: 'webhook_purge_removed_rows_total',
      help: 'Rows the purge of deleted webhooks removed, by table (webhook_deliveries, webhook_delivery_attempts, webhooks)',
      labelNames: ['table'],
      registers: [registry],
    });
    // every table from the start, so a rate over the first purge has a series to start from
    for (const table of PURGED_TABLES) this.purge.inc({ table }, 0);
    this.blocked = new Gauge({
      name: 'webhook_retention_blocked_days',
      help: 'Days of the delivery log past DELIVERY_RETENTION_DAYS kept because they still hold pending deliveries or unrelayed events (as of the last retention pass)',
      registers: [registry],
    });
  }

  /** Days past retention that the last retention pass of this process had to keep for their pending work. */
  retentionBlocked(days: number): void {
    this.blocked.set(days);
  }

  filterRefused(count: number): void {
    if (count > 0) this.refused.inc(count);
  }

  retentionRemoved(table: string, rows: number): void {
    this.retention.inc({ table }, rows);
  }

  purgeRemoved(table: (typeof PURGED_TABLES)[number], rows: number): void {
    if (rows > 0) this.purge.inc({ table }, rows);
  }

  disabled(reason: DisabledReason): void {
    this.disables.inc({ reason });
  }

  rateLimited(): void {
    this.holds.inc();
  }

  attempt(outcome: AttemptOutcome, error: AttemptError | null, durationMs: number): void {
    this.attempts.inc({ outcome, error: error ?? NO_ERROR });
    this.latency.observe({ outcome }, durationMs / 1000);
  }

  /** An attempt cut off with its worker (a timeout whose duration nobody measured: counted, not timed). */
  attemptCutOff(outcome: AttemptOutcome): void {
    this.attempts.inc({ outcome, error: 'timeout' });
  }
}

/** Gauges read at scrape time (every role): queue depth from Redis, the backlog from Postgres. */
@Injectable()
export class DispatchGauges implements OnModuleInit {
  constructor(
    private readonly registry: MetricsRegistry,
    private readonly store: DeliveryStore,
    private readonly webhooks: WebhookStore,
    private readonly outbox: OutboxStore,
    private readonly sql: Sql,
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
        // bounded: while Redis is unreachable its client holds the command, and the scrape would hang with it
        this.reset();
        const counts = await withDeadline(
          queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized'),
          QUEUE_DEPTH_WAIT_MS,
        ).catch(() => null);
        if (counts) for (const [state, n] of Object.entries(counts)) this.set({ queue: DELIVERY_QUEUE, state }, n);
      },
    });
    const { store, webhooks, outbox, sql } = this;
    const within: ScanOptions = { timeoutMs: DATABASE_GAUGE_WAIT_MS };
    const outboxReads = { query: (text: string, params?: unknown[]) => sql.scan(text, params, within) };
    /** A gauge read from Postgres at scrape time: NaN when it has no answer within DATABASE_GAUGE_WAIT_MS. */
    const fromDatabase = (name: string, help: string, read: () => Promise<number>) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect: async function (this: Gauge) {
          this.set(await boundedNumber(read));
        },
      });
    fromDatabase(
      'webhook_oldest_pending_delivery_age_seconds',
      'Age of the oldest delivery still pending (0 when none)',
      () => store.oldestPendingAge(within),
    );
    fromDatabase(
      'webhook_oldest_overdue_delivery_seconds',
      'How long the most overdue delivery (pending, due, not being sent) has been due (0 when none)',
      () => store.oldestOverdueAge(within),
    );
    fromDatabase(
      'webhook_deliveries_rate_limited',
      'Pending deliveries waiting for their turn under their webhook rate limit',
      () => store.rateLimitedCount(within),
    );
    fromDatabase(
      'webhook_ordered_blocked',
      'Ordered webhooks whose oldest pending delivery has failed at least once while later deliveries wait behind it',
      () => store.orderedBlockedCount(within),
    );
    new Gauge({
      name: 'webhooks_disabled',
      help: 'Inactive webhooks by reason (gone, failing, manual)',
      labelNames: ['reason'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        this.reset();
        const rows = await bounded(() => webhooks.disabledCounts(within));
        if (rows)
          for (const reason of DISABLED_REASONS) this.set({ reason }, rows.find((r) => r.reason === reason)?.n ?? 0);
      },
    });
    // the two purge gauges come from one read a scrape: a registry collects its metrics together, so the second
    // gauge joins the read the first began
    let purgeRead: ReturnType<WebhookStore['awaitingPurge']> | undefined;
    const awaitingPurge = () =>
      (purgeRead ??= webhooks.awaitingPurge(within).finally(() => {
        purgeRead = undefined;
      }));
    fromDatabase(
      'webhooks_awaiting_purge',
      'Deleted webhooks whose history the purge has not yet removed (a worker process removes it)',
      () => awaitingPurge().then((p) => p.count),
    );
    fromDatabase(
      'webhook_oldest_awaiting_purge_seconds',
      'How long ago the longest-deleted webhook still awaiting the purge was deleted (0 when none)',
      () => awaitingPurge().then((p) => p.oldestAgeSeconds),
    );
    fromDatabase('outbox_unrelayed_events', 'Events committed but not yet turned into deliveries', () =>
      outbox.unrelayedCount(outboxReads),
    );
    fromDatabase(
      'outbox_oldest_unrelayed_event_age_seconds',
      'Age of the oldest event committed but not yet turned into deliveries (0 when none)',
      () => outbox.oldestUnrelayedAge(outboxReads),
    );
  }
}
