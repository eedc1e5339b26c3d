import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EmittedEvent } from './event-names';
import { OutboxEventEntity } from './outbox-event.entity';

export const OUTBOX_CHANNEL = 'outbox_events';

/** Writes events into the outbox inside the caller's transaction. */
@Injectable()
export class EventsService {
  /**
   * Records `name` with its `message` using `manager`, which must be the transaction that makes the change.
   * A NOTIFY in the same transaction wakes the relay the moment it commits (and never if it rolls back).
   */
  async record(manager: EntityManager, name: EmittedEvent, message: Record<string, unknown>): Promise<OutboxEventEntity> {
    if (!manager.queryRunner?.isTransactionActive) throw new Error(`event ${name} must be recorded inside the transaction of its change`);
    const event = manager.create(OutboxEventEntity, { id: randomUUID(), name, payload: message, occurredAt: new Date(), relayedAt: null });
    // one round trip: the row, and the NOTIFY that fires when (and only if) the transaction commits
    await manager.query(
      `WITH e AS (INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES ($1, $2, $3, $4)) SELECT pg_notify('${OUTBOX_CHANNEL}', '')`,
      [event.id, event.name, JSON.stringify(event.payload), event.occurredAt],
    );
    return event;
  }
}
