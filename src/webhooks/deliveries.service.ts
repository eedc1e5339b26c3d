import { Injectable } from '@nestjs/common';
import { isUuidId } from '../common/http/ids';
import { portalPaging } from '../common/http/pagination';
import { notRfc3339Message, parseRfc3339 } from '../common/http/time';
import { ValidationFailed } from '../common/errors';
import { Sql } from '../database/sql';
import { DeliveryQueue } from './delivery.queue';
import { DeliveryRow, DeliveryStore } from './delivery.store';
import {
  AttemptResponse,
  DeliveryListQuery,
  DeliveryResponse,
  DeliveryWithAttemptsResponse,
  RecoverResponse,
} from './dto/delivery.dto';
import { WebhookStore } from './webhook.store';
import { WebhookError } from './webhooks.errors';

/**
 * The delivery log of a webhook, and redelivery by hand: the store makes the change (one statement, safe
 * against any other change of the same rows), then the jobs are queued after it committed.
 */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly store: DeliveryStore,
    private readonly webhooks: WebhookStore,
    private readonly queue: DeliveryQueue,
    private readonly sql: Sql,
  ) {}

  async list(webhookId: string, q: DeliveryListQuery): Promise<DeliveryResponse[]> {
    await this.webhook(webhookId);
    const { skip, take } = portalPaging(q);
    return (await this.store.list(webhookId, take, skip, q.status)).map(toResponse);
  }

  async get(webhookId: string, deliveryId: string): Promise<DeliveryWithAttemptsResponse> {
    const d = await this.delivery(webhookId, deliveryId);
    const attempts = await this.store.attempts(d);
    return {
      ...toResponse(d),
      Attempts: attempts.map((a): AttemptResponse => ({
        Number: a.number,
        StartedAt: new Date(a.started_at).toISOString(),
        StatusCode: a.status_code,
        DurationMs: a.duration_ms,
        Error: a.error,
        ResponseBody: a.response_body,
        Trigger: a.trigger,
      })),
    };
  }

  /** Sends a delivered or failed delivery once more, now (one manual attempt). */
  async redeliver(webhookId: string, deliveryId: string): Promise<DeliveryResponse> {
    const active = await this.webhook(webhookId);
    await this.delivery(webhookId, deliveryId);
    if (!active) throw WebhookError.inactive();
    const row = await this.store.redeliver(webhookId, deliveryId);
    if (!row) {
      // pending already, or gone meanwhile (its webhook deleted, its day past retention)
      if (await this.store.get(webhookId, deliveryId)) throw WebhookError.deliveryPending();
      throw WebhookError.deliveryNotFound();
    }
    await this.sql.afterCommit(() =>
      this.queue.enqueueCommitted(
        [{ id: row.id, at: row.at, webhookId, attemptCount: row.attempt_count }],
        'a redelivery',
      ),
    );
    return toResponse(row);
  }

  /** Queues again every failed delivery of the webhook created since `since` (one manual attempt each). */
  async recover(webhookId: string, since: string): Promise<RecoverResponse> {
    const active = await this.webhook(webhookId);
    if (!active) throw WebhookError.inactive();
    // the DTO has checked it; this guards callers that skip the validation pipe
    const from = parseRfc3339(since);
    if (!from) throw new ValidationFailed([notRfc3339Message('since')]);
    const due = await this.store.recover(webhookId, from);
    await this.sql.afterCommit(() => this.queue.enqueueCommitted(due, 'recovered deliveries'));
    return { Requeued: due.length };
  }

  /** Whether the webhook is active; 404 if it does not exist. */
  private async webhook(webhookId: string): Promise<boolean> {
    if (!isUuidId(webhookId)) throw WebhookError.notFound();
    const active = await this.webhooks.isActive(webhookId);
    if (active === null) throw WebhookError.notFound();
    return active;
  }

  private async delivery(webhookId: string, deliveryId: string): Promise<DeliveryRow> {
    await this.webhook(webhookId);
    if (!isUuidId(deliveryId)) throw WebhookError.deliveryNotFound();
    const d = await this.store.get(webhookId, deliveryId);
    if (!d) throw WebhookError.deliveryNotFound();
    return d;
  }
}

function toResponse(d: DeliveryRow): DeliveryResponse {
  return {
    ID: d.id,
    WebhookID: d.webhook_id,
    EventID: d.event_id,
    Event: d.event_name,
    Status: d.status,
    AttemptCount: d.attempt_count,
    NextAttemptAt: d.status === 'pending' && d.next_attempt_at ? new Date(d.next_attempt_at).toISOString() : null,
    CreatedAt: new Date(d.created_at).toISOString(),
    UpdatedAt: new Date(d.updated_at).toISOString(),
  };
}
