import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { JobsOptions, Queue } from 'bullmq';
import { DeadlineExceeded, withDeadline } from '../common/deadline';
import { isUuidId } from '../common/http/ids';
import { RedisConnection } from '../queue/queue.module';
import { TraceCarrier, traceCarrier } from './trace-context';

/** The dispatcher's one queue: one job per attempt of one delivery. */
export const DELIVERY_QUEUE = 'deliveries';
export const DELIVERY_JOB = 'delivery.send';

/** A job carries ids only: the delivery row in Postgres is the truth for status, attempts and next try. */
export interface DeliveryJobData {
  deliveryId: string;
  /**
   * The rest of the delivery's key: its partition key (its event's time, as Postgres text), so the worker's
   * statements read one partition. Absent from jobs queued before deliveries had it.
   */
  at?: string;
  webhookId: string;
  /** The trace the attempt joins (the relay of its event, or the request that asked for it); only when traced. */
  trace?: TraceCarrier;
}

/** A partition key as Postgres writes it for a job (`2026-11-22T10:15:03.481000Z`). */
const KEY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Whether a job's data names a delivery the way the service queues one. Jobs can also be added or edited by hand on
 * the queue board: one naming no delivery must not reach the claim, whose one statement it shares with the jobs
 * running beside it (a malformed id would fail them all).
 */
export function isDeliveryJobData(data: unknown): data is DeliveryJobData {
  if (typeof data !== 'object' || data === null) return false;
  const { deliveryId, webhookId, at } = data as Record<string, unknown>;
  if (!isUuidId(deliveryId) || !isUuidId(webhookId)) return false;
  return at === undefined || (typeof at === 'string' && KEY_TIME.test(at) && !Number.isNaN(Date.parse(at)));
}

/** A delivery that should have a job for its next attempt. */
export interface DueDelivery {
  id: string;
  /** Its partition key (DeliveryKey.at). */
  at: string;
  webhookId: string;
  /** Attempts made so far; the job is for attempt attemptCount + 1. */
  attemptCount: number;
  delayMs?: number;
  /** The trace its job should carry; by default the one active when it is queued. */
  trace?: TraceCarrier;
}

/** Job id of attempt `attempt` of a delivery: adding the same attempt twice queues it once. */
export function deliveryJobId(deliveryId: string, attempt: number): string {
  return `${deliveryId}-${attempt}`;
}

/** Options of every delivery job: its id for deduplication, and no Redis-side retention (Postgres is the record). */
export function deliveryJobOptions(jobId: string, delayMs?: number): JobsOptions {
  return {
    jobId,
    removeOnComplete: true,
    removeOnFail: true,
    attempts: 1,
    ...(delayMs ? { delay: Math.max(0, Math.round(delayMs)) } : {}),
  };
}

/**
 * How long committed work waits for the queue (enqueueCommitted) before it is left to the reconciler: while Redis is
 * unreachable its client holds commands until it is back, and a request that committed its change must not wait
 * as long. The jobs still go in when Redis returns (their ids make a second add a no-op).
 */
const COMMITTED_ENQUEUE_WAIT_MS = 2000;

/** How long redisReady waits for a connection to be set up before it counts Redis as unreachable. */
const REDIS_CHECK_MS = 500;

/** Jobs queued by one addBulk at most (see DeliveryQueue.enqueue). */
export const ENQUEUE_CHUNK = 100;

function jobData(d: DueDelivery): DeliveryJobData {
  const trace = d.trace ?? traceCarrier();
  const data: DeliveryJobData = { deliveryId: d.id, at: d.at, webhookId: d.webhookId };
  if (trace) data.trace = trace;
  return data;
}

/**
 * How long a stop waits for a BullMQ connection still being set up before closing it. Closed while it is set up,
 * BullMQ (5.81) drops its listeners first and then emits the set-up's failure as an 'error' nobody handles: an
 * unhandled rejection, which ends the process (a stop right after a start).
 */
export const BULL_READY_WAIT_MS = 2000;

/** Waits, up to BULL_READY_WAIT_MS, until a BullMQ queue or worker has its connection set up (see there). */
export async function settled(bull: { waitUntilReady(): Promise<unknown> }): Promise<void> {
  await withDeadline(bull.waitUntilReady(), BULL_READY_WAIT_MS).catch(() => undefined);
}

/**
 * Whether a BullMQ queue's or worker's Redis connection is up: set up within REDIS_CHECK_MS and ready. A server that
 * accepts connections but does not answer counts as up (its socket is open); one that refuses them does not.
 */
export async function redisReady(bull: { client: Promise<{ status: string }> }): Promise<boolean> {
  try {
    return (await withDeadline(bull.client, REDIS_CHECK_MS)).status === 'ready';
  } catch {
    return false;
  }
}

/**
 * How long a stop waits for BullMQ's normal close (the finished jobs marked done in Redis, then QUIT) from a Redis
 * that is connected. One that does not answer within it, frozen or cut off by the network with its connections still
 * open, would hold the stop until its bound (SHUTDOWN_TIMEOUT): its connection is dropped instead.
 */
export const REDIS_CLOSE_WAIT_MS = 5000;

/**
 * Closes a BullMQ queue or worker (`what`, for the warning) the normal way; should its Redis not answer within
 * REDIS_CLOSE_WAIT_MS, its connection is dropped, which fails at once what the close still waits for (and so ends
 * it). Jobs it had not yet marked done stay active in Redis until their locks lapse; the claims in Postgres make
 * them harmless. A stop closes a worker and up to two queues one after another: once Redis has left one of them
 * unanswered (`redis.closeUnanswered`), the next drop their connections without waiting.
 */
export async function closeWithin(
  bull: { close(): Promise<void>; client: Promise<{ disconnect(): void }> },
  what: string,
  redis: RedisConnection,
  logger: Logger,
): Promise<void> {
  const closed = bull.close();
  if (redis.closeUnanswered) {
    logger.warn(`Redis left an earlier close of this stop unanswered: dropping the ${what}'s connection at once`);
  } else {
    try {
      await withDeadline(closed, REDIS_CLOSE_WAIT_MS);
      return;
    } catch (err) {
      if (!(err instanceof DeadlineExceeded)) throw err;
      logger.warn(`Redis did not answer the ${what}'s close within ${REDIS_CLOSE_WAIT_MS} ms: dropping it`);
      redis.closeUnanswered = true;
    }
  }
  (await bull.client).disconnect();
  await closed;
}

/**
 * Closes a BullMQ queue at a stop, from a shutdown hook that runs before BullModule's own (whose close then finds it
 * closed), once every attempt under way has finished (their retries are queued): see BULL_READY_WAIT_MS. With Redis
 * connected, within REDIS_CLOSE_WAIT_MS (closeWithin). With Redis unreachable, BullMQ's close would send QUIT, which
 * waits in the client behind the commands held there while Redis is away (jobs enqueueCommitted gave up waiting for)
 * and never ends: the connection is dropped instead, without waiting. Postgres holds those deliveries, and the
 * reconciler queues them once Redis is back.
 */
export async function closeQueueAtStop(queue: Queue, redis: RedisConnection, logger: Logger): Promise<void> {
  await settled(queue);
  if (await redisReady(queue)) {
    await closeWithin(queue, 'queue', redis, logger);
    return;
  }
  // (BullMQ 5.x: a queue's close takes no `force`; its connection's does, and the queue's close then finds it closed)
  const { connection } = queue as unknown as { connection: { close(force: boolean): Promise<void> } };
  await connection.close(true);
}

/** The one place that puts delivery work on the queue. */
@Injectable()
export class DeliveryQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryQueue.name);

  constructor(
    @InjectQueue(DELIVERY_QUEUE) readonly queue: Queue<DeliveryJobData>,
    private readonly redis: RedisConnection,
  ) {}

  /**
   * Whether the queue's Redis connection is up (see redisReady). While it is not, commands wait in the client until
   * Redis is back: work that can wait for the next pass asks this first, rather than pile up commands and hold up
   * a stop.
   */
  connected(): Promise<boolean> {
    return redisReady(this.queue);
  }

  /** Just before BullModule closes the queue: see closeQueueAtStop. */
  async onApplicationShutdown(): Promise<void> {
    await closeQueueAtStop(this.queue, this.redis, this.logger);
  }

  /**
   * Queues work whose change Postgres has already committed (new, redelivered, recovered or retried
   * deliveries). The one policy for a queue that refuses it (Redis down): the change stands, so this never
   * throws; it logs, and the reconciler queues the deliveries once they are overdue. Answers whether they
   * were queued.
   */
  async enqueueCommitted(items: DueDelivery[], what: string): Promise<boolean> {
    try {
      await withDeadline(this.enqueue(items), COMMITTED_ENQUEUE_WAIT_MS);
      return true;
    } catch (err) {
      this.logger.warn({ err, deliveries: items.length }, `could not queue ${what}; the reconciler will`);
      return false;
    }
  }

  /** As enqueueCommitted, for requeueOverdue. */
  async requeueCommitted(items: DueDelivery[], what: string): Promise<number> {
    try {
      return await withDeadline(this.requeueOverdue(items), COMMITTED_ENQUEUE_WAIT_MS);
    } catch (err) {
      this.logger.warn({ err, deliveries: items.length }, `could not queue ${what}; the reconciler will`);
      return 0;
    }
  }

  /**
   * Queues one job per delivery, in chunks of ENQUEUE_CHUNK, one after the other: the jobs of a chunk can be taken
   * as soon as it is in (an addBulk is one MULTI, none of whose jobs is seen before all of it is), so the first
   * attempts of a large fan-out are sent while the rest is still being queued.
   */
  async enqueue(items: DueDelivery[]): Promise<void> {
    for (let from = 0; from < items.length; from += ENQUEUE_CHUNK) {
      await this.queue.addBulk(
        items.slice(from, from + ENQUEUE_CHUNK).map((d) => ({
          name: DELIVERY_JOB,
          data: jobData(d),
          opts: deliveryJobOptions(deliveryJobId(d.id, d.attemptCount + 1), d.delayMs),
        })),
      );
    }
  }

  /**
   * Re-queues deliveries Postgres says are overdue and unclaimed. A job still listed as active belongs
   * to a worker that died (the delivery's claim has lapsed); a job id listed without its job data, or job
   * data listed nowhere, is a leftover of keys deleted while the queue ran (the data would make a re-add
   * of the same id a no-op): all of these get a fresh job id. Waiting or delayed jobs are left alone. The
   * claim in Postgres keeps a stray duplicate job harmless.
   */
  async requeueOverdue(items: DueDelivery[]): Promise<number> {
    const fresh: { item: DueDelivery; jobId: string }[] = [];
    for (const item of items) {
      const jobId = deliveryJobId(item.id, item.attemptCount + 1);
      const [state, job] = await Promise.all([this.queue.getJobState(jobId), this.queue.getJob(jobId)]);
      if (state === 'unknown' && !job) fresh.push({ item, jobId });
      else if (state === 'unknown' || !job || state === 'active' || state === 'completed' || state === 'failed') {
        fresh.push({ item, jobId: `${jobId}-r${Date.now()}` });
      }
    }
    if (fresh.length === 0) return 0;
    await this.queue.addBulk(
      fresh.map(({ item, jobId }) => ({
        name: DELIVERY_JOB,
        data: jobData(item),
        opts: deliveryJobOptions(jobId, item.delayMs),
      })),
    );
    return fresh.length;
  }
}
