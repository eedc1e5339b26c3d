import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { isUuidId } from '../common/http/ids';
import { DataSource } from 'typeorm';
import { portalPaging } from '../common/http/pagination';
import { notRfc3339Message, parseRfc3339 } from '../common/http/time';
import { ValidationFailed } from '../common/errors';
import { Sql } from '../database/sql';
import { DeliveryQueue } from './delivery.queue';
import { DELIVERY_COLUMNS, DeliveryRow, DeliveryStore } from './delivery.store';
import {
  AttemptResponse,
  DeliveryListQuery,
  DeliveryResponse,
  DeliveryWithAttemptsResponse,
  RecoverResponse,
} from './dto/delivery.dto';
import { WebhookError } from './webhooks.errors';

/**
 * The log routes' statements (the scale spec checks their plans at millions of rows): each is served by an
 * index of every partition, and the attempts of a delivery are read from its one partition (they share its
 * partition key).
 */
export const DELIVERY_LOG_SQL = {
  list: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
  listByStatus: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 AND status = $4 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
  one: `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2`,
  attempts: `SELECT number, started_at, status_code, duration_ms, error, response_body, trigger
               FROM webhook_delivery_attempts WHERE delivery_id = $1 AND delivery_finished_at = $2::timestamptz ORDER BY number, id`,
};

/** The delivery log of a webhook, and redelivery by hand (the store makes the change, then the jobs are queued). */
@Injectable()
export class DeliveriesService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
    private readonly sql: Sql,
  ) {}

  async list(webhookId: string, q: DeliveryListQuery): Promise<DeliveryResponse[]> {
    await this.webhook(webhookId);
    const { skip, take } = portalPaging(q);
    const params: unknown[] = [webhookId, take, skip];
    if (q.status) params.push(q.status);
    const rows: DeliveryRow[] = await this.db.query(
      q.status ? DELIVERY_LOG_SQL.listByStatus : DELIVERY_LOG_SQL.list,
      params,
    );
    return rows.map(toResponse);
  }

  async get(webhookId: string, deliveryId: string): Promise<DeliveryWithAttemptsResponse> {
    const d = await this.delivery(webhookId, deliveryId);
    const attempts: Record<string, any>[] = await this.db.query(DELIVERY_LOG_SQL.attempts, [d.id, d.finished_at]);
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
    if (!row) throw WebhookError.deliveryPending();
    await this.sql.afterCommit(() => this.queue.enqueue([{ id: row.id, webhookId, attemptCount: row.attempt_count }]));
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
    await this.sql.afterCommit(() => this.queue.enqueue(due));
    return { Requeued: due.length };
  }

  /** Whether the webhook is active; 404 if it does not exist. */
  private async webhook(webhookId: string): Promise<boolean> {
    if (!isUuidId(webhookId)) throw WebhookError.notFound();
    const [w] = await this.db.query(`SELECT active FROM webhooks WHERE id = $1`, [webhookId]);
    if (!w) throw WebhookError.notFound();
    return w.active;
  }

  private async delivery(webhookId: string, deliveryId: string): Promise<DeliveryRow> {
    await this.webhook(webhookId);
    if (!isUuidId(deliveryId)) throw WebhookError.deliveryNotFound();
    const [d] = await this.db.query(DELIVERY_LOG_SQL.one, [deliveryId, webhookId]);
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
