import { randomUUID } from 'node:crypto';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Job } from 'bullmq';
import { AppConfig } from '../../config';
import { RedisConnection } from '../../queue/queue.module';
import {
  DELIVERY_QUEUE,
  DeliveryJobData,
  DeliveryQueue,
  isDeliveryJobData,
  redisReady,
  closeWithin,
  settled,
} from '../delivery.queue';
import { AttemptRecord, ClaimedDelivery, DeliveryKey, DeliveryStore, RecordOutcome } from '../delivery.store';
import { databaseAway } from '../../database/database-away';
import { DestinationRegistry } from '../send/destination-registry';
import { OutgoingMessage } from '../send/destination';
import { OpenedSecrets } from '../send/opened-secrets';
import { SecretBox } from '../../common/crypto/secret-box';
import { decide } from '../send/retry-policy';
import { attemptOutcome } from '../attempt-outcome';
import { DeliverySigner } from '../send/delivery-signer';
import { DeliveryMetrics } from '../webhook-metrics';
import { AttemptTrace } from './attempt-trace';
import { Batcher } from './batcher';
import { RateLimits } from './rate-limits';
import { WebhookGate } from './webhook-gate';
import { WebhookHealth } from './webhook-health';

const BODYLESS = new Set(['GET', 'DELETE']);

/**
 * How long a job may wait in line for a slot of its webhook before stepping aside (see WebhookGate). Long
 * enough that a subscriber that answers in tens of milliseconds keeps its jobs in line under a burst (stepping
 * aside costs queue round trips and seconds of delay), short enough that a slow one steps aside at once.
 */
const MAX_SLOT_WAIT_MS = 1000;

/**
 * Recording an attempt that failed (Postgres restarting, failing over, refusing connections for a moment) is tried
 * again after these waits, doubling up to the last, while the claim's lease lasts (less RECORD_LEASE_MARGIN_MS);
 * giving back claims (giveBackAll), each for up to GIVE_BACK_TRY_MS.
 */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 2000;
const RECORD_LEASE_MARGIN_MS = 1000;
/** Past this, a claim not given back has long lapsed, and is settled as cut off when its delivery is next claimed. */
const GIVE_BACK_TRY_MS = 5 * 60_000;

/**
 * Sends one attempt of one delivery: claim in Postgres, sign, send with the webhook's method, headers and
 * timeout, record the attempt, and schedule the next one by the retry policy.
 * A webhook may hold at most a quarter of this process's slots, so a slow subscriber cannot starve the
 * others: its extra jobs wait briefly in line when it answers quickly, and step aside for a moment otherwise.
 * Claims and attempt records of jobs running at the same time share statements (Batcher).
 */
// A short lock lets another worker take over the jobs of a killed one within seconds.
@Processor(DELIVERY_QUEUE, { concurrency: 64, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 10 })
export class DeliveryProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryProcessor.name);
  private closing = false;
  /** The jobs this process is running, awaited at shutdown when BullMQ cannot wait for them itself. */
  private readonly underWay = new Set<Promise<void>>();
  /** Claims to give back unsent (giveBack), by token: their deliveries, and until when to keep trying. */
  private readonly givingBack = new Map<string, { keys: DeliveryKey[]; until: number }>();
  /** The run of giveBackAll under way, if any (one at a time). */
  private givingBackAll?: Promise<void>;
  private readonly gate: WebhookGate;
  private readonly claims: Batcher<DeliveryKey, ClaimedDelivery | null>;
  private readonly records: Batcher<AttemptRecord, RecordOutcome | Error>;
  /** Destination URLs kept sealed (those with credentials), opened once per webhook for a while. */
  private readonly targets: OpenedSecrets<string>;

  constructor(
    private readonly config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
    private readonly destinations: DestinationRegistry,
    private readonly secrets: SecretBox,
    private readonly signer: DeliverySigner,
    private readonly metrics: DeliveryMetrics,
    private readonly rateLimits: RateLimits,
    private readonly health: WebhookHealth,
    private readonly redis: RedisConnection,
  ) {
    super();
    this.gate = new WebhookGate(Math.max(2, Math.floor(config.webhooks.concurrency / 4)), MAX_SLOT_WAIT_MS, {
      capacity: config.webhooks.concurrency,
    });
    const size = Math.max(1, config.webhooks.concurrency);
    // one statement of each in flight: a statement costs Postgres about the same whatever its rows, so the jobs
    // arriving while one runs share the next (a call made while none runs still goes out at once)
    this.claims = new Batcher((keys) => this.claim(keys), { maxBatch: size, maxConcurrent: 1 });
    this.records = new Batcher((attempts) => this.store.recordAttempts(attempts), { maxBatch: size, maxConcurrent: 1 });
    this.targets = new OpenedSecrets((sealed) => this.secrets.decrypt(sealed));
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.webhooks.concurrency;
  }

  /**
   * Lets the attempts in flight finish and record themselves while the database is still there: the worker takes no
   * new job, and its attempts under way are awaited here (they need Postgres and their receivers, not Redis). Only
   * then is BullMQ's own close chosen. With Redis up, the normal one (the finished jobs are marked done in Redis),
   * its connection dropped should Redis not answer it within REDIS_CLOSE_WAIT_MS (closeWithin). With Redis
   * unreachable (refused, not merely slow), where the normal one would never end (it waits for its blocking
   * connection to end, which a reconnecting client never does, and for its jobs to be marked done), its connections
   * are dropped at once. Their jobs then stay active in Redis; the claims in Postgres make them harmless, and the
   * reconciler queues whatever is still due. Choosing after the attempts, not before, means Redis dying while they
   * run (a stop during an outage's first seconds) no longer holds the stop up until its bound.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    await settled(this.worker);
    await this.worker.pause(true);
    await this.attemptsFinished();
    if (await redisReady(this.worker)) {
      await closeWithin(this.worker, 'worker', this.redis, this.logger);
      return;
    }
    await this.worker.close(true);
    await this.attemptsFinished();
  }

  /** Resolves once no attempt is under way (one taken while it waits is waited for too). */
  private async attemptsFinished(): Promise<void> {
    while (this.underWay.size) await Promise.allSettled([...this.underWay]);
  }

  async process(job: Job<DeliveryJobData>, token?: string): Promise<void> {
    const run = this.run(job, token);
    this.underWay.add(run);
    try {
      await run;
    } finally {
      this.underWay.delete(run);
    }
  }

  private async run(job: Job<DeliveryJobData>, token?: string): Promise<void> {
    if (!isDeliveryJobData(job.data)) {
      // added or edited by hand on the queue board: Postgres is the record, and it holds no such delivery
      this.logger.warn({ jobId: job.id, jobName: job.name }, 'a job that names no delivery was dropped');
      return;
    }
    const slot = await this.gate.acquire(job.data.webhookId, token !== undefined);
    if (!slot) {
      await job.moveToDelayed(Date.now() + this.gate.stepAsideMs(job.data.webhookId), token);
      throw new DelayedError();
    }
    const traced = new AttemptTrace(job.data.trace);
    let heldMs: number;
    try {
      heldMs = await this.attempt({ id: job.data.deliveryId, at: job.data.at ?? null }, traced);
    } catch (err) {
      traced.abandon(err);
      throw err;
    } finally {
      this.gate.release(slot);
    }
    if (heldMs > 0 && token !== undefined) {
      // the same job comes back when its turn is due; the delivery row says when, for the reconciler
      await job.moveToDelayed(Date.now() + heldMs, token);
      throw new DelayedError();
    }
  }

  /**
   * Claims the deliveries of these jobs, under a token of this claim's own. Should it fail, its statements may have
   * committed with their answers lost (or the first before the next failed): whatever it holds was not sent, and is
   * given back.
   */
  private async claim(keys: DeliveryKey[]): Promise<(ClaimedDelivery | null)[]> {
    const token = randomUUID();
    try {
      return await this.claimWith(keys, token);
    } catch (err) {
      this.giveBack(keys, token);
      throw err;
    }
  }

  /**
   * Those not claimed at once may hold a claim that lapsed mid-attempt (its worker was killed or froze): that attempt
   * is recorded as cut off, and a delivery still due is claimed again.
   */
  private async claimWith(keys: DeliveryKey[], token: string): Promise<(ClaimedDelivery | null)[]> {
    const claimed = await this.store.claimMany(keys, token);
    const missed = keys.filter((k, i): k is { id: string; at: string } => claimed[i] === null && k.at !== null);
    if (missed.length === 0) return claimed;
    const cut = await this.store.recordCutOff(missed, this.config.webhooks.retrySchedule.length);
    if (cut.length === 0) return claimed;
    for (const c of cut) {
      this.logger.warn(
        { deliveryId: c.id, webhookId: c.webhookId, attempt: c.number },
        `attempt cut off: its worker stopped before recording it; recorded as a timeout${c.final ? ', the delivery failed' : ''}`,
      );
      this.metrics.attemptCutOff(c.final ? 'failed' : 'retry');
    }
    const again = cut.filter((c) => !c.final);
    const retaken = again.length > 0 ? await this.store.claimMany(again, token) : [];
    const byId = new Map(retaken.filter((d): d is ClaimedDelivery => d !== null).map((d) => [d.id, d]));
    return claimed.map((d, i) => {
      if (d !== null) return d;
      const taken = byId.get(keys[i].id) ?? null;
      byId.delete(keys[i].id); // one claim per delivery, as claimMany gives it
      return taken;
    });
  }

  /** One attempt of the delivery, if it is due and ours; answers how long to wait when its rate limit is used up. */
  private async attempt(key: DeliveryKey, traced: AttemptTrace): Promise<number> {
    const d = await this.claims.call(key);
    if (!d) return 0; // not due, taken by another worker, no longer pending, or waiting for its turn in order
    let waitMs: number | null;
    try {
      waitMs = await this.beforeSending(d);
    } catch (err) {
      // Redis away (the rate limit), Postgres away: nothing was sent
      this.giveBack([d], d.claim);
      throw err;
    }
    if (waitMs !== null) return waitMs;
    await this.send(d, traced);
    return 0;
  }

  /**
   * What comes between the claim and the send: null when the attempt is to be sent now; otherwise how long until
   * the delivery is due again (0: never, it failed without an attempt).
   */
  private async beforeSending(d: ClaimedDelivery): Promise<number | null> {
    if (!d.active || d.payload === null) {
      // switched off, or the event outlived by its delivery went with retention: nothing to send
      await this.store.failWithoutAttempt(d, d.lease);
      await this.afterFinal(d);
      return 0;
    }
    if (d.rateLimit !== null) {
      const waitMs = await this.rateLimits.admit(d.webhookId, d.rateLimit);
      if (waitMs > 0) {
        await this.store.hold(d, d.lease, new Date(Date.now() + waitMs));
        this.metrics.rateLimited();
        return waitMs;
      }
    }
    return null;
  }

  /**
   * Gives back, unsent, the deliveries of `keys` that the claim made with `token` still holds
   * (DeliveryStore.releaseClaims): a claim that failed, perhaps committed with its answer lost, or one whose attempt
   * failed before it was sent. Kept, each would stay claimed until its lease lapsed and then be recorded as an attempt
   * cut off (a timeout without a status code, one step of the schedule used up), though nothing had been sent. In the
   * background (giveBackAll): the job's error goes on at once, and the reconciler queues the deliveries again once
   * they are given back and overdue.
   */
  private giveBack(keys: DeliveryKey[], token: string): void {
    const claim = this.givingBack.get(token);
    if (claim) claim.keys.push(...keys);
    else this.givingBack.set(token, { keys: [...keys], until: Date.now() + GIVE_BACK_TRY_MS });
    this.startGivingBack();
  }

  /** Starts giveBackAll unless it runs; and again should claims have come after its last look. */
  private startGivingBack(): void {
    if (this.givingBackAll || this.givingBack.size === 0) return;
    const run = this.giveBackAll().finally(() => {
      this.givingBackAll = undefined;
      this.underWay.delete(run);
      this.startGivingBack();
    });
    this.givingBackAll = run;
    this.underWay.add(run);
  }

  /**
   * Gives back every claim waiting for it in one statement (a day's), tried again while Postgres is away, each claim
   * for up to GIVE_BACK_TRY_MS, and not past a stop: while Postgres is away every batch's claim fails, and the
   * claims given back together cost one statement a try, not one each.
   */
  private async giveBackAll(): Promise<void> {
    let waitMs = RETRY_FIRST_MS;
    while (this.givingBack.size > 0) {
      const claims = [...this.givingBack];
      this.givingBack.clear();
      try {
        const given = await this.store.releaseClaims(
          claims.flatMap(([token, c]) => c.keys.map((key) => ({ key, token }))),
        );
        if (given > 0) this.logger.warn({ deliveries: given }, 'deliveries claimed and not sent were given back');
        waitMs = RETRY_FIRST_MS;
        continue;
      } catch (err) {
        const late = Date.now() + waitMs;
        let dropped = 0;
        for (const [token, c] of claims) {
          if (this.closing || c.until < late) dropped += c.keys.length;
          else this.giveBackLater(token, c);
        }
        if (dropped > 0)
          this.logger.warn(
            { reason: (err as Error).message, deliveries: dropped },
            'giving back deliveries claimed and not sent failed: each is recorded as cut off once its claim lapses',
          );
      }
      if (this.givingBack.size === 0) return;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(waitMs * 2, RETRY_MAX_MS);
    }
  }

  /** Puts a claim back among those to give back (beside keys of the same claim that came meanwhile). */
  private giveBackLater(token: string, claim: { keys: DeliveryKey[]; until: number }): void {
    const since = this.givingBack.get(token);
    if (since) since.keys.push(...claim.keys);
    this.givingBack.set(token, since ? { keys: since.keys, until: claim.until } : claim);
  }

  private async send(d: ClaimedDelivery, traced: AttemptTrace): Promise<void> {
    const number = d.attemptCount + 1;
    traced.begin(d, number);
    const startedAt = new Date();
    const target = {
      url: d.destinationEncrypted ? this.targets.get(d.destinationEncrypted) : d.url,
      options: d.destinationOptions,
    };
    const result = await traced.sending(() => this.destinations.send(d.type, target, this.buildMessage(d)));
    const outcome =
      d.trigger === 'manual' && result.error !== null && result.statusCode !== 410
        ? { kind: 'final' as const } // a manual redelivery is one attempt
        : decide(result, number, this.config.webhooks.retrySchedule);
    const nextAttemptAt = outcome.kind === 'retry' ? new Date(Date.now() + outcome.delayMs) : null;
    const status = outcome.kind === 'delivered' ? 'delivered' : outcome.kind === 'retry' ? 'pending' : 'failed';
    const record: AttemptRecord = {
      deliveryId: d.id,
      at: d.at,
      webhookId: d.webhookId,
      number,
      startedAt,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      responseBody: result.responseBody,
      trigger: d.trigger,
      status,
      nextAttemptAt,
      lease: d.lease,
    };
    const gone = outcome.kind === 'disable';
    const recorded = await this.record(d, record, gone);
    const said = recorded === 'superseded' ? 'superseded' : attemptOutcome(outcome.kind);
    traced.end(result, said, recorded instanceof Error ? recorded : null);
    if (recorded instanceof Error) throw recorded;
    this.metrics.attempt(said, result.error, result.durationMs);
    if (recorded === 'superseded') {
      if (!(await this.store.exists(d.id))) {
        this.logger.log(
          { deliveryId: d.id, webhookId: d.webhookId, attempt: number },
          'the webhook was deleted while its delivery was being sent: the attempt is not recorded',
        );
        return;
      }
      // this worker's claim lapsed (it was frozen or cut off) and another one took the delivery over; or a try of
      // this record that failed as the database went away had committed, its answer lost (record() tried again)
      this.logger.warn(
        { deliveryId: d.id, attempt: number },
        'the claim of this delivery is no longer held (it lapsed and another worker took the delivery over, or an ' +
          'earlier try of this record committed and its answer was lost): not recorded again',
      );
      return;
    }
    if (!gone) await this.health.observe(d, result.error === null, startedAt);
    if (outcome.kind === 'retry') {
      await this.queue.enqueueCommitted(
        [
          {
            id: d.id,
            at: d.at,
            webhookId: d.webhookId,
            attemptCount: number,
            delayMs: outcome.delayMs,
            trace: traced.next,
          },
        ],
        'a retry',
      );
    } else {
      await this.afterFinal(d);
    }
  }

  /**
   * Records the attempt. The answer is known here, so a record that fails because Postgres is away for a moment
   * (databaseAway: restarting, failing over, refusing connections) is tried again while the claim's lease lasts:
   * given up, the attempt would be recorded as cut off (a timeout without a status, lasting the whole lease) once
   * the lease lapses, and the delivery sent again though the subscriber may have taken it. Trying again is safe: a
   * record needs the claim's lease, which a record that did commit (its answer lost with the connection) no longer
   * holds, so that one comes back `superseded`, never twice. A stopping worker does not wait (its stop is bounded);
   * any other error, or one that outlives the lease, is returned.
   */
  private async record(d: ClaimedDelivery, record: AttemptRecord, gone: boolean): Promise<RecordOutcome | Error> {
    // the lease as Postgres wrote it (its text, which Date.parse reads); unreadable, nothing is tried again
    const deadline = Date.parse(d.lease) - RECORD_LEASE_MARGIN_MS;
    for (let waitMs = RETRY_FIRST_MS; ; waitMs = Math.min(waitMs * 2, RETRY_MAX_MS)) {
      let recorded: RecordOutcome | Error;
      try {
        recorded = this.health.closes(d, record, gone)
          ? await this.health.recordClosing(d, record, gone)
          : await this.records.call(record);
      } catch (err) {
        recorded = err instanceof Error ? err : new Error(String(err));
      }
      if (!(recorded instanceof Error) || !databaseAway(recorded) || this.closing || !(Date.now() + waitMs <= deadline))
        return recorded;
      // the reason alone: while Postgres restarts every attempt under way says the same; a stack each floods the log
      this.logger.warn(
        { reason: recorded.message, deliveryId: d.id, attempt: record.number, retryInMs: waitMs },
        'recording an attempt failed: trying again while its claim lasts',
      );
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  /** An ordered webhook's delivery is done (delivered or failed for good): its next one may go now. */
  private async afterFinal(d: ClaimedDelivery): Promise<void> {
    if (!d.ordered) return;
    const next = await this.store.nextInOrder(d.webhookId);
    if (!next) return;
    const delayMs = next.nextAttemptAt ? new Date(next.nextAttemptAt).getTime() - Date.now() : 0;
    // its own job may be running right now, about to find it still blocked: then it gets a fresh one
    await this.queue.requeueCommitted([{ ...next, delayMs: delayMs > 0 ? delayMs : undefined }], 'the next in order');
  }

  /** The same body and headers for every destination type; only an HTTP GET or DELETE goes without a body. */
  private buildMessage(d: ClaimedDelivery): OutgoingMessage {
    const hasBody = d.type !== 'http' || !BODYLESS.has(d.method);
    const body = hasBody
      ? JSON.stringify({ Event: d.eventName, Message: d.payload, Timestamp: d.occurredAt!.toISOString() })
      : '';
    const headers: Record<string, string> = { 'user-agent': 'gateway-management-webhooks/1.0' };
    for (const h of d.headers) headers[h.name.toLowerCase()] = h.value;
    headers['content-type'] = 'application/json';
    Object.assign(headers, this.signer.headers(d, d.id, body));
    return {
      id: d.id,
      eventName: d.eventName,
      method: d.method,
      headers,
      body: hasBody ? body : null,
      timeoutMs: d.timeoutSeconds * 1000,
    };
  }

  /** BullMQ reconnects by itself; without a listener its 'error' event would crash the process. */
  @OnWorkerEvent('error')
  onError(err: Error): void {
    if (this.closing) return; // connections closing under a stopping worker are expected
    this.logger.warn({ err }, 'delivery worker lost its Redis connection; it reconnects');
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, err: Error): void {
    if (err instanceof DelayedError) return;
    const what = 'delivery job failed; the reconciler will pick the delivery up again';
    // Postgres away for a moment (restarting, failing over, a backend terminated) is the world's, not a fault here
    if (databaseAway(err)) this.logger.warn({ err, jobId: job?.id }, `${what} (the database was away)`);
    else this.logger.error({ err, jobId: job?.id }, what);
  }
}
