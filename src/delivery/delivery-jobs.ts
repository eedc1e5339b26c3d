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

  async enqueueFanouts(eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.events.addBulk(eventIds.map((eventId) => ({ name: 'event.fanout', data: { eventId }, opts: jobOptions('event.fanout', eventId) })));
  }
}
