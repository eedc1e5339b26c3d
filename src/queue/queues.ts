import { JobsOptions } from 'bullmq';

/** Every queue of the service. Payloads carry ids only; Postgres holds the truth. */
export const QueueName = {
  Events: 'events',
  Deliveries: 'deliveries',
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];

export interface JobPayloads {
  /** An outbox event to fan out to subscribed webhooks. jobId = event id. */
  'event.fanout': { eventId: string };
  /** One delivery of one event to one webhook. jobId = delivery id (+ attempt for retries). */
  'delivery.send': { deliveryId: string; webhookId: string };
}
export type JobName = keyof JobPayloads;

/** Job options in one place: ids for deduplication, and no Redis-side retention (Postgres is the record). */
export function jobOptions<N extends JobName>(name: N, jobId: string, extra: JobsOptions = {}): JobsOptions {
  return {
    jobId,
    removeOnComplete: true,
    removeOnFail: true,
    attempts: 1,
    ...extra,
  };
}
