import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { context, propagation } from '@opentelemetry/api';
import { DirectedEvent, EmittedEvent } from './event-names';
import { OutboxRow, OutboxStore, TransactionQuery } from './outbox.store';

export { OUTBOX_CHANNEL, parseOutboxNotification, TransactionQuery } from './outbox.store';

export interface RecordedEvent extends OutboxRow {
  name: EmittedEvent | DirectedEvent;
}

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

/** Records events into the outbox inside the caller's transaction (through the OutboxStore). */
@Injectable()
export class EventsService {
  constructor(private readonly outbox: OutboxStore) {}

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
    const recorded = this.rows(events);
    await this.outbox.insert(tx, recorded, traceJson());
    return recorded;
  }

  /**
   * Records events of a change that one bigger statement makes on its own (its own transaction, or a part of the
   * caller's): the statement's parts that insert them and NOTIFY their ids (see OutboxStore.insertParts), for the
   * caller to put in it. The events are recorded exactly when the statement commits with rows under `when`.
   */
  async recordInStatement(
    events: { name: EmittedEvent; message: Record<string, unknown> }[],
    opts: { first: number; when: string; merge?: (string | undefined)[] },
  ): Promise<{ recorded: RecordedEvent[]; cte: string; notify: string; params: unknown[] }> {
    const recorded = this.rows(events);
    return { recorded, ...(await this.outbox.insertParts(recorded, traceJson(), opts)) };
  }

  /** The outbox rows of the events of one change: in order, a millisecond apart. */
  private rows(events: { name: EmittedEvent; message: Record<string, unknown> }[]): RecordedEvent[] {
    const at = Date.now();
    return events.map((e, i) => ({ id: randomUUID(), name: e.name, payload: e.message, occurredAt: new Date(at + i) }));
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
    await this.outbox.insertForWebhook(tx, event, webhookId, traceJson());
    return event;
  }
}
