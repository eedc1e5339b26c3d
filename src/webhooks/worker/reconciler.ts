import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DeliveryQueue } from '../delivery.queue';
import { DeliveryStore } from '../delivery.store';

export const RECONCILE_INTERVAL_MS = 2000;
/** How long work may be overdue before the reconciler assumes its job was lost. */
export const RECONCILE_GRACE_SECONDS = 3;
const BATCH = 2000;
const LOCK_KEY = 4242_0002;

/**
 * Re-queues deliveries Postgres says are due but Redis may not hold: pending, past due and unclaimed
 * (Redis restarted empty, keys deleted, a worker killed mid-delivery, the relay could not queue them).
 * Job ids are deterministic, so re-adding work that is still queued is a no-op.
 * One process at a time does it (transaction-scoped advisory lock).
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(Reconciler.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), RECONCILE_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.reconcile()
      .catch((err) => this.logger.warn({ err }, 'reconcile pass failed; will retry'))
      .finally(() => (this.running = undefined))
      .then(() => undefined);
  }

  /** One pass; returns how many deliveries it re-queued. */
  async reconcile(): Promise<{ deliveries: number }> {
    return this.db.transaction(async (tx) => {
      const [{ locked }] = await tx.query(`SELECT pg_try_advisory_xact_lock($1) AS locked`, [LOCK_KEY]);
      if (!locked) return { deliveries: 0 };
      const overdue = await this.store.overdueDeliveries(RECONCILE_GRACE_SECONDS, BATCH);
      const deliveries = await this.queue.requeueOverdue(overdue);
      if (deliveries) this.logger.log({ deliveries }, 're-queued overdue deliveries');
      return { deliveries };
    });
  }
}
