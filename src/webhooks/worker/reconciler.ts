import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DeliveryQueue } from '../delivery.queue';
import { DeliveryStore } from '../delivery.store';
import { PeriodicRunner, PeriodicTask } from '../../common/periodic/periodic.runner';

export const RECONCILE_INTERVAL_MS = 2000;
/** How long work may be overdue before the reconciler assumes its job was lost. */
export const RECONCILE_GRACE_SECONDS = 3;
const BATCH = 2000;
const LOCK_KEY = 4242_0002;

/**
 * Re-queues deliveries Postgres says are due but Redis may not hold: pending, past due and unclaimed
 * (Redis restarted empty, keys deleted, a worker killed mid-delivery, the relay or an API call could not
 * queue them after their change committed). Job ids are deterministic, so re-adding work that is still
 * queued is a no-op. One process at a time does it (advisory lock); no transaction is open while it
 * talks to Redis.
 */
@Injectable()
export class Reconciler implements OnApplicationBootstrap {
  private readonly logger = new Logger(Reconciler.name);
  private readonly task: PeriodicTask<{ deliveries: number }> = {
    name: 'reconciler',
    intervalMs: RECONCILE_INTERVAL_MS,
    lock: LOCK_KEY,
    run: () => this.pass(),
  };

  constructor(
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
    private readonly runner: PeriodicRunner,
  ) {}

  onApplicationBootstrap(): void {
    this.runner.schedule(this.task);
  }

  /** One pass; how many deliveries it re-queued (null when another pass or process is at it). */
  async reconcile(): Promise<{ deliveries: number } | null> {
    return this.runner.runOnce(this.task);
  }

  private async pass(): Promise<{ deliveries: number }> {
    // with Redis unreachable nothing can be queued: a pass would wait for it (holding up a stop) while its
    // commands piled up in the client; the first pass once it is back does the work
    if (!(await this.queue.connected())) return { deliveries: 0 };
    const overdue = await this.store.overdueDeliveries(RECONCILE_GRACE_SECONDS, BATCH);
    const deliveries = await this.queue.requeueOverdue(overdue);
    if (deliveries) this.logger.log({ deliveries }, 're-queued overdue deliveries');
    return { deliveries };
  }
}
