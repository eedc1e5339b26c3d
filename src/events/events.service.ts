import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { context, propagation } from '@opentelemetry/api';
import { DirectedEvent, EmittedEvent } from './event-names';

/** The channel a transaction that wrote events NOTIFYs on commit; the payload lists the events' ids. */
export const OUTBOX_CHANNEL = 'outbox_events';

/** NOTIFY payloads are limited to 8000 bytes: past this many ids the payload is left empty ("look for yourself"). */
const MAX_IDS_PER_NOTIFY = 200;

export interface RecordedEvent {
  id: string;
  name: EmittedEvent | DirectedEvent;
  payload: Record<string, unknown>;
  occurredAt: Date;
}

/**
 * What the writer needs of the caller's transaction: a TypeORM EntityManager inside `transaction()`,
 * or a pg client between BEGIN and COMMIT.
 */
export interface TransactionQuery {
  query(text: string, params?: unknown[]): Promise<unknown>;
  queryRunner?: { isTransactionActive: boolean };
}

/**
 * The ids a NOTIFY on OUTBOX_CHANNEL announces, or null when it does not say (the listener should then
 * look for unrelayed events itself).
 */
export function parseOutboxNotification(payload: string | undefined): string[] | null {
  if (!payload) return null;
  const ids = payload.split(',');
  return ids.every((id) => UUID.test(id)) ? ids : null;
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The trace context of the running operation as the configured propagator writes it (W3C: `traceparent`,
 * and `tracestate` when there is one), or null when nothing is traced. Stored with each event, so the relay
 * and every delivery attempt of the event join the trace of the request that caused it.
 */
export function currentTraceContext(): Record<string, string> | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : null;
}

function traceJson(): string | null {
  const trace = currentTraceContext();
  return trace === null ? null : JSON.stringify(trace);
}

/** Writes events into the outbox inside the caller's transaction. */
@Injectable()
export class EventsService {
  /**
   * Records `name` with its `message` using `tx`, which must be the transaction that makes the change.
   * A NOTIFY in the same transaction wakes the relay the moment it commits (and never if it rolls back).
   */
  async record(tx: TransactionQuery, name: EmittedEvent, message: Record<string, unknown>): Promise<RecordedEvent> {
    return (await this.recordAll(tx, [{ name, message }]))[0];
  }

  /**
   * Records several events of one transaction in one round trip: the rows, and one NOTIFY carrying their
   * ids. A transaction should record its events together, so that it sends one NOTIFY.
   */
  async recordAll(
    tx: TransactionQuery,
    events: { name: EmittedEvent; message: Record<string, unknown> }[],
  ): Promise<RecordedEvent[]> {
    if (tx.queryRunner && !tx.queryRunner.isTransactionActive)
      throw new Error(
        `events ${events.map((e) => e.name).join(', ')} must be recorded inside the transaction of their change`,
      );
    if (events.length === 0) return [];
    // events of one change happen in order: a millisecond apart, so ordering by time keeps their order
    const at = Date.now();
    const recorded: RecordedEvent[] = events.map((e, i) => ({
      id: randomUUID(),
      name: e.name,
      payload: e.message,
      occurredAt: new Date(at + i),
    }));
    const ids = recorded.map((e) => e.id);
    await tx.query(
      `WITH e AS (INSERT INTO outbox_events (id, name, payload, occurred_at, trace_context)
                  SELECT u.*, $6::jsonb FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::timestamptz[]) AS u)
       SELECT pg_notify('${OUTBOX_CHANNEL}', $5)`,
      [
        ids,
        recorded.map((e) => e.name),
        recorded.map((e) => JSON.stringify(e.payload)),
        recorded.map((e) => e.occurredAt),
        ids.length <= MAX_IDS_PER_NOTIFY ? ids.join(',') : '',
        traceJson(),
      ],
    );
    return recorded;
  }

  /**
   * Records an event meant for one webhook alone (a test send): the relay gives it one delivery, to
   * `webhookId`, whatever that webhook subscribes to, and none to any other webhook.
   */
  async recordForWebhook(
    tx: TransactionQuery,
    webhookId: string,
    name: DirectedEvent,
    message: Record<string, unknown>,
  ): Promise<RecordedEvent> {
    if (tx.queryRunner && !tx.queryRunner.isTransactionActive)
      throw new Error(`event ${name} must be recorded inside a transaction`);
    const event: RecordedEvent = { id: randomUUID(), name, payload: message, occurredAt: new Date() };
    await tx.query(
      `WITH e AS (INSERT INTO outbox_events (id, name, payload, occurred_at, target_webhook_id, trace_context) VALUES ($1, $2, $3, $4, $5, $6::jsonb))
       SELECT pg_notify('${OUTBOX_CHANNEL}', $1::text)`,
      [event.id, name, JSON.stringify(message), event.occurredAt, webhookId, traceJson()],
    );
    return event;
  }
}
