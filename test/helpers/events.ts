import { EmittedEvent } from '../../src/events/event-names';
import { EventsService } from '../../src/events/events.service';
import { TestApp } from './test-app';

/** Records an event through the outbox exactly as a feature does, in its own transaction. */
export async function emitEvent(t: TestApp, name: EmittedEvent, message: Record<string, unknown>): Promise<string> {
  const events = t.app.get(EventsService);
  const e = await t.db.transaction((tx) => events.record(tx, name, message));
  return e.id;
}

/**
 * What is left of webhook `webhookId` in each table that holds it: its row, headers, kept subscriptions, deliveries
 * and attempts (after a DELETE, until the workers' purge).
 */
export async function webhookRows(
  db: { query(text: string, params: unknown[]): Promise<any[]> },
  webhookId: string,
): Promise<{ webhooks: number; headers: number; kept: number; deliveries: number; attempts: number }> {
  const [rows] = await db.query(
    `SELECT (SELECT count(*) FROM webhooks WHERE id = $1)::int AS webhooks,
            (SELECT count(*) FROM webhook_headers WHERE webhook_id = $1)::int AS headers,
            (SELECT count(*) FROM webhook_subscriptions_ended WHERE webhook_id = $1)::int AS kept,
            (SELECT count(*) FROM webhook_deliveries WHERE webhook_id = $1)::int AS deliveries,
            (SELECT count(*) FROM webhook_delivery_attempts WHERE webhook_id = $1)::int AS attempts`,
    [webhookId],
  );
  return rows;
}

/** How many deliveries `webhookId` has (in `status`, if given). */
export async function deliveryCount(
  t: TestApp,
  webhookId: string,
  status?: 'pending' | 'delivered' | 'failed',
): Promise<number> {
  const [row] = await t.db.query(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND ($2::text IS NULL OR status = $2)`,
    [webhookId, status ?? null],
  );
  return row.n;
}
