import { Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { parseRfc3339 } from '../common/http/time';
import { DeliveryStore } from './delivery.store';
import { WebhookStore } from './webhook.store';
import { WebhookStatsResponse } from './dto/stats.dto';
import { WebhookError } from './webhooks.errors';

const DAY_MS = 24 * 3600 * 1000;

/** Health of one webhook over a window (DeliveryStore.stats reads it from indexes alone). */
@Injectable()
export class WebhookStatsService {
  constructor(
    private readonly webhooks: WebhookStore,
    private readonly store: DeliveryStore,
  ) {}

  async stats(webhookId: string, since?: string): Promise<WebhookStatsResponse> {
    if (!isUUID(webhookId)) throw WebhookError.notFound();
    if ((await this.webhooks.isActive(webhookId)) === null) throw WebhookError.notFound();
    const until = new Date();
    const from = parseRfc3339(since) ?? new Date(until.getTime() - DAY_MS);
    const { counts, latency, lastSuccess: success, lastFailure: failure } = await this.store.stats(webhookId, from);
    const finished = counts.delivered + counts.failed;
    return {
      WebhookID: webhookId,
      Since: from.toISOString(),
      Until: until.toISOString(),
      Delivered: counts.delivered,
      Failed: counts.failed,
      Pending: counts.pending,
      Retrying: counts.retrying,
      SuccessRate: finished > 0 ? Math.round((counts.delivered / finished) * 10_000) / 10_000 : null,
      Attempts: latency.attempts,
      LatencyP50Ms: latency.p50 === null ? null : Math.round(Number(latency.p50)),
      LatencyP95Ms: latency.p95 === null ? null : Math.round(Number(latency.p95)),
      LastSuccessAt: success ? new Date(success.started_at).toISOString() : null,
      LastFailure: failure
        ? {
            At: new Date(failure.started_at).toISOString(),
            StatusCode: failure.status_code,
            Error: failure.error,
            ResponseBody: failure.response_body,
          }
        : null,
    };
  }
}
