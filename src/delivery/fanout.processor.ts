import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { JobPayloads, QueueName } from '../queue/queues';
import { Batcher } from './batcher';
import { DeliveryJobs } from './delivery-jobs';
import { DeliveryStore } from './delivery-store';

/**
 * Turns one outbox event into one delivery row per subscribed webhook, then one job per delivery.
 * Events fanned out at the same time share one statement and one bulk add to the deliveries queue;
 * each job still completes only once its deliveries are queued.
 */
@Processor(QueueName.Events, { concurrency: 32, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 10 })
export class FanoutProcessor extends WorkerHost {
  private readonly batch: Batcher<string, number>;

  constructor(
    private readonly store: DeliveryStore,
    private readonly jobs: DeliveryJobs,
  ) {
    super();
    this.batch = new Batcher((eventIds) => this.fanOut(eventIds), { maxBatch: 100, maxConcurrent: 2 });
  }

  async process(job: Job<JobPayloads['event.fanout']>): Promise<number> {
    return this.batch.call(job.data.eventId);
  }

  private async fanOut(eventIds: string[]): Promise<number[]> {
    const unique = [...new Set(eventIds)];
    const due = await this.store.fanOutMany(unique);
    await this.jobs.enqueueDeliveries(due.flat());
    const counts = new Map(unique.map((id, i) => [id, due[i].length]));
    return eventIds.map((id) => counts.get(id) ?? 0);
  }
}
