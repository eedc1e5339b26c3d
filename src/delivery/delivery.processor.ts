import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Job } from 'bullmq';
import { SecretBox } from '../common/crypto/secret-box';
import { AppConfig } from '../config';
import { JobPayloads, QueueName } from '../queue/queues';
import { DeliveryJobs } from './delivery-jobs';
import { ClaimedDelivery, DeliveryStore } from './delivery-store';
import { DeliveryMetrics } from './delivery-metrics';
import { HttpSender } from './http-sender';
import { decide } from './retry-policy';
import { signatureHeaders } from './signing';

const BODYLESS = new Set(['GET', 'DELETE']);

/**
 * Sends one attempt of one delivery: claim in Postgres, sign, send with the webhook's method, headers and
 * timeout, record the attempt, and schedule the next one by the retry policy.
 * A webhook may hold at most `perWebhookLimit` of this process's slots, so a slow subscriber cannot
 * starve the others: its extra jobs step aside for a moment.
 */
// A short lock lets another worker take over the jobs of a killed one within seconds.
@Processor(QueueName.Deliveries, { concurrency: 64, lockDuration: 10_000, stalledInterval: 5_000, maxStalledCount: 10 })
export class DeliveryProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(DeliveryProcessor.name);
  private readonly inFlight = new Map<string, number>();
  private readonly perWebhookLimit: number;

  constructor(
    private readonly config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly jobs: DeliveryJobs,
    private readonly sender: HttpSender,
    private readonly secrets: SecretBox,
    private readonly metrics: DeliveryMetrics,
  ) {
    super();
    this.perWebhookLimit = Math.max(2, Math.floor(config.webhooks.concurrency / 4));
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.webhooks.concurrency;
  }

  async process(job: Job<JobPayloads['delivery.send']>, token?: string): Promise<void> {
    const { webhookId } = job.data;
    const busy = this.inFlight.get(webhookId) ?? 0;
    if (busy >= this.perWebhookLimit && token) {
      await job.moveToDelayed(Date.now() + 500 + Math.floor(Math.random() * 1000), token);
      throw new DelayedError();
    }
    this.inFlight.set(webhookId, busy + 1);
    try {
      await this.attempt(job.data.deliveryId);
    } finally {
      const left = (this.inFlight.get(webhookId) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(webhookId);
      else this.inFlight.set(webhookId, left);
    }
  }

  private async attempt(deliveryId: string): Promise<void> {
    const d = await this.store.claim(deliveryId);
    if (!d) return; // not due, taken by another worker, or no longer pending
    if (!d.active) {
      await this.store.failWithoutAttempt(d.id);
      return;
    }
    const number = d.attemptCount + 1;
    const startedAt = new Date();
    const result = await this.sender.send(this.buildRequest(d));
    const outcome = d.trigger === 'manual' && !(result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) && result.statusCode !== 410
      ? { kind: 'final' as const } // a manual redelivery is one attempt
      : decide(result, number, this.config.webhooks.retrySchedule);
    const nextAttemptAt = outcome.kind === 'retry' ? new Date(Date.now() + outcome.delayMs) : null;
    const status = outcome.kind === 'delivered' ? 'delivered' : outcome.kind === 'retry' ? 'pending' : 'failed';
    await this.store.recordAttempt({
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
    this.metrics.attempt(status, result.error, result.durationMs);
    if (outcome.kind === 'disable') {
      await this.store.deactivateWebhook(d.webhookId);
      this.logger.warn({ webhookId: d.webhookId }, 'subscriber answered 410 Gone: webhook deactivated');
    }
    if (outcome.kind === 'retry') {
      await this.jobs.enqueueDeliveries([{ id: d.id, webhookId: d.webhookId, attemptCount: number, delayMs: outcome.delayMs }]);
    }
  }

  private buildRequest(d: ClaimedDelivery) {
    const hasBody = !BODYLESS.has(d.method);
    const body = hasBody ? JSON.stringify({ Event: d.eventName, Message: d.payload, Timestamp: new Date(d.occurredAt).toISOString() }) : '';
    const headers: Record<string, string> = { 'user-agent': 'gateway-management-webhooks/1.0' };
    for (const h of d.headers) headers[h.name.toLowerCase()] = h.value;
    headers['content-type'] = 'application/json';
    Object.assign(headers, signatureHeaders(this.secrets.decrypt(d.secretEncrypted), d.id, body));
    return { url: d.url, method: d.method, headers, body: hasBody ? body : null, timeoutMs: d.timeoutSeconds * 1000 };
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, err: Error): void {
    if (err instanceof DelayedError) return;
    this.logger.error({ err, jobId: job?.id }, 'delivery job failed; the reconciler will pick the delivery up again');
  }
}
