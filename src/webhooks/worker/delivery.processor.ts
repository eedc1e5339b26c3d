import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Job } from 'bullmq';
import { AppConfig } from '../../config';
import { DELIVERY_QUEUE, DeliveryJobData, DeliveryQueue } from '../delivery-queue';
import { AttemptRecord, ClaimedDelivery, DeliveryStore } from '../delivery-store';
import { HttpSender } from '../send/http-sender';
import { decide } from '../send/retry-policy';
import { DeliverySigner } from '../send/delivery-signer';
import { DeliveryMetrics } from '../webhook-metrics';
import { AttemptTrace } from './attempt-trace';
import { Batcher } from './batcher';
import { WebhookGate } from './webhook-gate';

const BODYLESS = new Set(['GET', 'DELETE']);

/** How long a job may wait in line for a slot of its webhook before stepping aside (see WebhookGate). */
const MAX_SLOT_WAIT_MS = 200;

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
  private readonly gate: WebhookGate;
  private readonly claims: Batcher<string, ClaimedDelivery | null>;
  private readonly records: Batcher<AttemptRecord, Error | null>;

  constructor(
    private readonly config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
    private readonly sender: HttpSender,
    private readonly signer: DeliverySigner,
    private readonly metrics: DeliveryMetrics,
  ) {
    super();
    this.gate = new WebhookGate(Math.max(2, Math.floor(config.webhooks.concurrency / 4)), MAX_SLOT_WAIT_MS);
    const size = Math.max(1, config.webhooks.concurrency);
    this.claims = new Batcher((ids) => this.store.claimMany(ids), { maxBatch: size, maxConcurrent: 2 });
    this.records = new Batcher((attempts) => this.store.recordAttempts(attempts), { maxBatch: size, maxConcurrent: 2 });
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.webhooks.concurrency;
  }

  /** Lets the attempts in flight finish and record themselves while the database is still there. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }

  async process(job: Job<DeliveryJobData>, token?: string): Promise<void> {
    const slot = await this.gate.acquire(job.data.webhookId, token !== undefined);
    if (!slot) {
      await job.moveToDelayed(Date.now() + this.gate.stepAsideMs(job.data.webhookId), token);
      throw new DelayedError();
    }
    const traced = new AttemptTrace(job.data.trace);
    try {
      await this.attempt(job.data.deliveryId, traced);
    } catch (err) {
      traced.abandon(err);
      throw err;
    } finally {
      this.gate.release(slot);
    }
  }

  private async attempt(deliveryId: string, traced: AttemptTrace): Promise<void> {
    const d = await this.claims.call(deliveryId);
    if (!d) return; // not due, taken by another worker, or no longer pending
    if (!d.active) {
      await this.store.failWithoutAttempt(d.id);
      return;
    }
    const number = d.attemptCount + 1;
    traced.begin(d, number);
    const startedAt = new Date();
    const result = await traced.sending(() => this.sender.send(this.buildRequest(d)));
    const outcome = d.trigger === 'manual' && !(result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) && result.statusCode !== 410
      ? { kind: 'final' as const } // a manual redelivery is one attempt
      : decide(result, number, this.config.webhooks.retrySchedule);
    const nextAttemptAt = outcome.kind === 'retry' ? new Date(Date.now() + outcome.delayMs) : null;
    const status = outcome.kind === 'delivered' ? 'delivered' : outcome.kind === 'retry' ? 'pending' : 'failed';
    const failed = await this.records.call({
      deliveryId: d.id,
      number,
      startedAt,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      responseBody: result.responseBody,
      trigger: d.trigger,
      status,
      nextAttemptAt,
    });
    traced.end(result, outcome.kind, failed);
    if (failed) throw failed;
    this.metrics.attempt(status, result.error, result.durationMs);
    if (outcome.kind === 'disable') {
      await this.store.deactivateWebhook(d.webhookId);
      this.logger.warn({ webhookId: d.webhookId }, 'subscriber answered 410 Gone: webhook deactivated');
    }
    if (outcome.kind === 'retry') {
      await this.queue.enqueue([{ id: d.id, webhookId: d.webhookId, attemptCount: number, delayMs: outcome.delayMs, trace: traced.next }]);
    }
  }

  private buildRequest(d: ClaimedDelivery) {
    const hasBody = !BODYLESS.has(d.method);
    const body = hasBody ? JSON.stringify({ Event: d.eventName, Message: d.payload, Timestamp: new Date(d.occurredAt).toISOString() }) : '';
    const headers: Record<string, string> = { 'user-agent': 'gateway-management-webhooks/1.0' };
    for (const h of d.headers) headers[h.name.toLowerCase()] = h.value;
    headers['content-type'] = 'application/json';
    Object.assign(headers, this.signer.headers(d, d.id, body));
    return { url: d.url, method: d.method, headers, body: hasBody ? body : null, timeoutMs: d.timeoutSeconds * 1000 };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, err: Error): void {
    if (err instanceof DelayedError) return;
    this.logger.error({ err, jobId: job?.id }, 'delivery job failed; the reconciler will pick the delivery up again');
  }
}
