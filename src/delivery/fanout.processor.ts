import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { JobPayloads, QueueName } from '../queue/queues';
import { DeliveryJobs } from './delivery-jobs';
import { DeliveryStore } from './delivery-store';

/** Turns one outbox event into one delivery row per subscribed webhook, then one job per delivery. */
@Processor(QueueName.Events, { concurrency: 8, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 10 })
export class FanoutProcessor extends WorkerHost {
  constructor(
    private readonly store: DeliveryStore,
    private readonly jobs: DeliveryJobs,
  ) {
    super();
  }

  async process(job: Job<JobPayloads['event.fanout']>): Promise<number> {
    const due = await this.store.fanOut(job.data.eventId);
    await this.jobs.enqueueDeliveries(due);
    return due.length;
  }
}
