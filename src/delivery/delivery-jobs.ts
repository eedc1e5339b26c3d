import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { jobOptions, JobPayloads, QueueName } from '../queue/queues';

export interface DueDelivery {
  id: string;
  webhookId: string;
  /** Attempts made so far; the job is for attempt attemptCount + 1. */
  attemptCount: number;
  delayMs?: number;
}

/**
 * The one place that puts delivery and fan-out work on the queues. Job ids are deterministic
 * (event id; delivery id + attempt number), so adding the same work twice queues it once.
 */
@Injectable()
export class DeliveryJobs {
  constructor(
    @InjectQueue(QueueName.Deliveries) private readonly deliveries: Queue<JobPayloads['delivery.send']>,
    @InjectQueue(QueueName.Events) private readonly events: Queue<JobPayloads['event.fanout']>,
  ) {}

  static jobId(deliveryId: string, attempt: number): string {
    return `${deliveryId}-${attempt}`;
  }

  async enqueueDeliveries(items: DueDelivery[]): Promise<void> {
    if (items.length === 0) return;
    await this.deliveries.addBulk(
      items.map((d) => ({
        name: 'delivery.send',
        data: { deliveryId: d.id, webhookId: d.webhookId },
        opts: jobOptions('delivery.send', DeliveryJobs.jobId(d.id, d.attemptCount + 1), d.delayMs ? { delay: Math.max(0, Math.round(d.delayMs)) } : {}),
      })),
    );
  }

  /**
   * Re-queues deliveries Postgres says are overdue and unclaimed. A job still listed as active belongs
   * to a worker that died (the delivery's claim has lapsed), so the delivery gets a fresh job id;
   * waiting or delayed jobs are left alone. The claim in Postgres keeps a stray duplicate job harmless.
   */
  async requeueOverdue(items: DueDelivery[]): Promise<number> {
    const fresh: { item: DueDelivery; jobId: string }[] = [];
    for (const item of items) {
      const jobId = DeliveryJobs.jobId(item.id, item.attemptCount + 1);
      const state = await this.deliveries.getJobState(jobId);
      if (state === 'unknown') fresh.push({ item, jobId });
      else if (state === 'active' || state === 'completed' || state === 'failed') fresh.push({ item, jobId: `${jobId}-r${Date.now()}` });
    }
    if (fresh.length === 0) return 0;
    await this.deliveries.addBulk(
      fresh.map(({ item, jobId }) => ({ name: 'delivery.send', data: { deliveryId: item.id, webhookId: item.webhookId }, opts: jobOptions('delivery.send', jobId) })),
    );
    return fresh.length;
  }

  async enqueueFanouts(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.events.addBulk(eventIds.map((eventId) => ({ name: 'event.fanout', data: { eventId }, opts: jobOptions('event.fanout', eventId) })));
  }
}
