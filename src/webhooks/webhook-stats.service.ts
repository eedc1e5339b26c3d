import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUUID } from 'class-validator';
import { DataSource } from 'typeorm';
import { parseRfc3339 } from '../common/http/time';
import { WebhookStatsResponse } from './dto/stats.dto';
import { WebhookError } from './webhooks.errors';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Health of one webhook over a window, read from indexes alone where it counts: deliveries by status from
 * (webhook_id, created_at) INCLUDE (status, attempt_count); attempt latency from the two partial attempt
 * indexes (successes, failures) INCLUDE (duration_ms); the last success and the last failure from the top
 * of each. The cost grows with the deliveries in the window, never with the webhook's whole history.
 */
@Injectable()
export class WebhookStatsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async stats(webhookId: string, since?: string): Promise<WebhookStatsResponse> {
    if (!isUUID(webhookId)) throw WebhookError.notFound();
    const [w] = await this.db.query(`SELECT 1 FROM webhooks WHERE id = $1`, [webhookId]);
    if (!w) throw WebhookError.notFound();
    const until = new Date();
    const from = parseRfc3339(since) ?? new Date(until.getTime() - DAY_MS);
    const [[counts], [latency], [success], [failure]] = await Promise.all([
      this.db.query(
        `SELECT count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                count(*) FILTER (WHERE status = 'failed')::int AS failed,
                count(*) FILTER (WHERE status = 'pending' AND attempt_count = 0)::int AS pending,
                count(*) FILTER (WHERE status = 'pending' AND attempt_count > 0)::int AS retrying
           FROM webhook_deliveries WHERE webhook_id = $1 AND created_at >= $2`,
        [webhookId, from],
      ),
      this.db.query(
        `SELECT count(*)::int AS attempts,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
                percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95
           FROM (SELECT duration_ms FROM webhook_delivery_attempts WHERE webhook_id = $1 AND started_at >= $2 AND error IS NULL
                 UNION ALL
                 SELECT duration_ms FROM webhook_delivery_attempts WHERE webhook_id = $1 AND started_at >= $2 AND error IS NOT NULL) a`,
        [webhookId, from],
      ),
      this.db.query(
        `SELECT started_at FROM webhook_delivery_attempts WHERE webhook_id = $1 AND error IS NULL ORDER BY started_at DESC LIMIT 1`,
        [webhookId],
      ),
      this.db.query(
        `SELECT started_at, status_code, error, response_body FROM webhook_delivery_attempts
          WHERE webhook_id = $1 AND error IS NOT NULL ORDER BY started_at DESC LIMIT 1`,
        [webhookId],
      ),
    ]);
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
