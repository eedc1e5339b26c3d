import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DeliveryLogStore } from '../delivery-log.store';
import { DeliveryMetrics } from '../webhook-metrics';
import { WebhookStore } from '../webhook.store';
import { PeriodicRunner, PeriodicTask } from '../../common/periodic/periodic.runner';

export const PURGE_INTERVAL_MS = 2000;
/** Rows of one table a batch deletes, in short statements of their own (one per day partition that holds some). */
export const PURGE_BATCH = 2000;
/** A pass stops starting batches after this long, so a stop waits at most about this for it. */
const PASS_BUDGET_MS = 1500;
/** Deleted webhooks a pass looks at, the longest deleted first. */
const WEBHOOKS_PER_PASS = 10;
const LOCK_KEY = 4242_0004;

export interface PurgePass {
  /** Webhooks whose history is gone, and their rows with it. */
  purged: string[];
  deliveries: number;
  attempts: number;
}

/**
 * Removes what deleted webhooks leave: DELETE marks a webhook (one row written, so a webhook with millions of
 * deliveries is deleted as fast as an empty one, and the relay never waits on it), and this deletes its deliveries
 * and attempts in batches of PURGE_BATCH rows, pending ones first, then the webhook's row with its headers. Until
 * then nothing acts on them: no route finds the webhook, no event is relayed to it, no delivery of it is claimed or
 * re-queued (only the backlog gauges still count its pending deliveries). A pass starts no batch after
 * PASS_BUDGET_MS, and the next one goes on where it stopped. One worker at a time.
 */
@Injectable()
export class WebhookPurge implements OnApplicationBootstrap {
  private readonly logger = new Logger(WebhookPurge.name);
  private readonly task: PeriodicTask<PurgePass> = {
    name: 'purge of deleted webhooks',
    intervalMs: PURGE_INTERVAL_MS,
    lock: LOCK_KEY,
    run: () => this.pass(),
  };

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly log: DeliveryLogStore,
    private readonly runner: PeriodicRunner,
    private readonly metrics: DeliveryMetrics,
  ) {}

  onApplicationBootstrap(): void {
    this.runner.schedule(this.task);
  }

  /** One pass; null when another pass (of this or another process) is running. */
  async run(): Promise<PurgePass | null> {
    return this.runner.runOnce(this.task);
  }

  private async pass(): Promise<PurgePass> {
    const until = Date.now() + PASS_BUDGET_MS;
    const result: PurgePass = { purged: [], deliveries: 0, attempts: 0 };
    for (const id of await this.webhooks.deleted(WEBHOOKS_PER_PASS)) {
      let done = false;
      while (!done && Date.now() < until) {
        const batch = await this.log.purgeBatch(id, PURGE_BATCH);
        result.deliveries += batch.deliveries;
        result.attempts += batch.attempts;
        this.metrics.purgeRemoved('webhook_deliveries', batch.deliveries);
        this.metrics.purgeRemoved('webhook_delivery_attempts', batch.attempts);
        done = batch.done;
      }
      if (!done) break;
      await this.webhooks.purge(id);
      this.metrics.purgeRemoved('webhooks', 1);
      result.purged.push(id);
    }
    if (result.purged.length || result.deliveries || result.attempts)
      this.logger.log(result, 'purged the history of deleted webhooks');
    return result;
  }
}
