import { Client } from 'pg';
import { WEBHOOK_EVENTS } from '../../src/events/event-names';
import { DeliveryQueue } from '../../src/webhooks/delivery.queue';
import { DeliveryStore, keyText } from '../../src/webhooks/delivery.store';
import { PURGE_BATCH } from '../../src/webhooks/worker/webhook-purge';
import { emitEvent, webhookRows } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

/** The purge's advisory lock (WebhookPurge): held by the spec, the workers' passes skip their work. */
const PURGE_LOCK = 4242_0004;
const DELIVERED = 2 * PURGE_BATCH + 500;
const PENDING = 300;

/**
 * Deleting a webhook marks it, and the workers' purge deletes its history in batches afterwards. Between the two,
 * the webhook is gone for every route, and nothing reaches it: no event is relayed to it, no delivery of it is
 * claimed, sent or re-queued, even one due and already queued. Then its deliveries, attempts, headers and kept
 * subscriptions go, and the webhook's row last; another webhook keeps all of its own.
 */
describe('a deleted webhook and the purge of its history', () => {
  // one attempt each: a failure is final at once
  const t = useService({ receiver: true, vars: { WEBHOOK_RETRY_SCHEDULE: '0' } });

  /** Holds the purge's lock until release(): the workers' passes skip their work meanwhile. */
  async function holdPurge(): Promise<{ release(): Promise<void> }> {
    const holder = new Client({ connectionString: t.env.databaseUrl });
    await holder.connect();
    t.adopt({ close: () => holder.end() });
    await holder.query(`SELECT pg_advisory_lock($1)`, [PURGE_LOCK]);
    return { release: async () => void (await holder.query(`SELECT pg_advisory_unlock($1)`, [PURGE_LOCK])) };
  }

  /** The purge's gauges and its counter, by table, from /metrics. */
  async function metrics(): Promise<{ awaiting: number; oldest: number; removed: Record<string, number> }> {
    const text = (await t.http.get('/metrics')).text;
    const gauge = (name: string) => Number(new RegExp(`\\n${name} (\\S+)\\n`).exec(text)?.[1]);
    const removed: Record<string, number> = {};
    for (const [, table, n] of text.matchAll(/\nwebhook_purge_removed_rows_total\{table="(\w+)"\} (\d+)/g))
      removed[table] = Number(n);
    return {
      awaiting: gauge('webhooks_awaiting_purge'),
      oldest: gauge('webhook_oldest_awaiting_purge_seconds'),
      removed,
    };
  }

  it('is gone for every route at once, reached by nothing, then purged whole', async () => {
    const purge = await holdPurge();
    const a = await t.webhook({ Events: [...WEBHOOK_EVENTS] });
    const b = await t.webhook({ Events: ['AccessRequestApproved'] });
    expect((await t.portal.post(`/portal-api/webhooks/${a.ID}/headers`, { Name: 'X-A', Value: '1' })).status).toBe(201);
    // a subscription change is kept (webhook_subscriptions_ended) until the webhook goes
    expect((await t.portal.put(`/portal-api/webhooks/${a.ID}`, { Events: [...WEBHOOK_EVENTS] })).status).toBe(200);
    expect((await t.portal.put(`/portal-api/webhooks/${a.ID}`, { Active: false })).status).toBe(200);
    expect((await t.portal.put(`/portal-api/webhooks/${a.ID}`, { Active: true })).status).toBe(200);

    // a history longer than two batches, over two days, with attempts that succeeded and failed, and pending
    // deliveries not yet due
    await t.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at,
                                       event_occurred_at, created_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved',
              CASE WHEN g <= $2::int THEN 'delivered' ELSE 'pending' END, CASE WHEN g <= $2::int THEN 1 ELSE 0 END,
              CASE WHEN g <= $2::int THEN NULL ELSE now() + interval '1 hour' END,
              now() - (g % 2) * interval '1 day', now() - (g % 2) * interval '1 day'
         FROM generate_series(1, $2::int + $3::int) g`,
      [a.ID, DELIVERED, PENDING],
    );
    await t.db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, status_code, duration_ms, error, trigger,
                                              webhook_id, event_occurred_at)
       SELECT id, 1, created_at, CASE WHEN random() < 0.5 THEN 200 ELSE 500 END, 5, NULL, 'scheduled', webhook_id,
              event_occurred_at
         FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'`,
      [a.ID],
    );
    await t.db.query(
      `UPDATE webhook_delivery_attempts SET error = 'http_status' WHERE webhook_id = $1 AND status_code = 500`,
      [a.ID],
    );
    const rows = (id: string) => webhookRows(t.db, id);
    const before = await rows(a.ID);
    expect(before).toEqual({ webhooks: 1, headers: 1, kept: 2, deliveries: DELIVERED + PENDING, attempts: DELIVERED });

    const deleted = await t.portal.delete(`/portal-api/webhooks/${a.ID}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ status: 'ok', message: 'webhook deleted' });

    // gone for every route
    const gone = `/portal-api/webhooks/${a.ID}`;
    const anyDelivery = (await t.db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 LIMIT 1`, [a.ID]))[0]
      .id;
    for (const [method, path, body] of [
      ['get', gone],
      ['put', gone, { Active: false }],
      ['delete', gone],
      ['get', `${gone}/secret`],
      ['post', `${gone}/secret/rotate`, {}],
      ['post', `${gone}/test`, {}],
      ['get', `${gone}/headers`],
      ['post', `${gone}/headers`, { Name: 'X-B', Value: '2' }],
      ['get', `${gone}/deliveries`],
      ['get', `${gone}/deliveries/${anyDelivery}`],
      ['post', `${gone}/deliveries/${anyDelivery}/redeliver`, {}],
      ['post', `${gone}/recover`, { since: new Date(Date.now() - 86_400_000).toISOString() }],
      ['get', `${gone}/stats`],
    ] as const) {
      const res = await (method === 'get' || method === 'delete'
        ? t.portal[method](path)
        : t.portal[method](path, body));
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    const listed = (await t.portal.get('/portal-api/webhooks?per_page=100')).body as { ID: string }[];
    expect(listed.map((w) => w.ID)).toEqual([b.ID]);
    // and the metrics say a deletion awaits the purge
    await new Promise((r) => setTimeout(r, 1100));
    const waiting = await metrics();
    expect(waiting.awaiting).toBe(1);
    expect(waiting.oldest).toBeGreaterThanOrEqual(1);
    expect(waiting.removed).toEqual({ webhook_deliveries: 0, webhook_delivery_attempts: 0, webhooks: 0 });

    // its pending deliveries come due, and one is even queued (a job from before the deletion): none is claimed
    await t.db.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute' WHERE webhook_id = $1 AND status = 'pending'`,
      [a.ID],
    );
    const store = t.app.get(DeliveryStore);
    const overdue = await store.overdueDeliveries(0, 10_000);
    expect(overdue.filter((d) => d.webhookId === a.ID)).toEqual([]);
    const due: { id: string; at: string }[] = await t.db.query(
      `SELECT id, ${keyText('event_occurred_at')} AS at
         FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' LIMIT 5`,
      [a.ID],
    );
    expect(await store.claimMany(due.slice(0, 2))).toEqual([null, null]);
    const queued = due.slice(2).map((d) => ({ ...d, webhookId: a.ID, attemptCount: 0 }));
    expect(await t.app.get(DeliveryQueue).enqueueCommitted(queued, 'jobs of a deleted webhook')).toBe(true);

    // an event both were subscribed to reaches the other one alone
    const event = await emitEvent(t, 'AccessRequestApproved', { ID: 1 });
    await t.sink.waitFor((r) => r.some((x) => x.url === b.path), 30_000, "the other webhook's delivery");
    await new Promise((r) => setTimeout(r, 1000));
    expect(t.sink.received.filter((x) => x.url === a.path)).toEqual([]);
    const ofEvent = `SELECT webhook_id FROM webhook_deliveries WHERE event_id = $1`;
    expect((await t.db.query(ofEvent, [event])).map((r: { webhook_id: string }) => r.webhook_id)).toEqual([b.ID]);

    // nothing of its history went with the request (which ended its subscription, kept like any other change),
    // and nothing was sent or recorded since
    expect(await rows(a.ID)).toEqual({ ...before, kept: before.kept + 1 });
    const [{ attempted }] = await t.db.query(
      `SELECT count(*)::int AS attempted FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' AND attempt_count > 0`,
      [a.ID],
    );
    expect(attempted).toBe(0);

    // the workers' purge, let go, removes all of it, in batches, and the row last
    await purge.release();
    const none = { webhooks: 0, headers: 0, kept: 0, deliveries: 0, attempts: 0 };
    await eventually(
      async () => {
        const left = await rows(a.ID);
        return JSON.stringify(left) === JSON.stringify(none) ? left : null;
      },
      60_000,
      "the purge of the deleted webhook's history",
    );
    await eventually(async () => ((await metrics()).removed.webhooks === 1 ? true : null), 5_000, 'the purge counted');
    expect(await metrics()).toEqual({
      awaiting: 0,
      oldest: 0,
      removed: { webhook_deliveries: DELIVERED + PENDING, webhook_delivery_attempts: DELIVERED, webhooks: 1 },
    });
    const other = await rows(b.ID);
    expect(other).toEqual({ webhooks: 1, headers: 0, kept: 0, deliveries: 1, attempts: 1 });
    expect((await t.portal.get(`/portal-api/webhooks/${b.ID}`)).status).toBe(200);
  }, 120_000);

  it('raises no DeliveryFailed about a webhook deleted while its last attempt was out', async () => {
    const purge = await holdPurge();
    const ops = await t.webhook({ Events: ['DeliveryFailed'] });
    const a = await t.webhook({ Events: ['AccessRequestRejected'] });
    t.sink.responder = (r) => (r.url === a.path ? { status: 500, body: 'no', delayMs: 1500 } : { status: 200 });
    await emitEvent(t, 'AccessRequestRejected', { ID: 2 });
    await t.sink.waitFor((r) => r.some((x) => x.url === a.path), 30_000, 'the attempt');
    expect((await t.portal.delete(`/portal-api/webhooks/${a.ID}`)).status).toBe(200);

    // the answer comes back after the deletion: the failure is recorded on the delivery, which is still there
    await eventually(
      async () =>
        (await t.db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'failed'`, [a.ID]))
          .length > 0 || null,
      30_000,
      'the failed attempt recorded',
    );
    const raised = await t.db.query(
      `SELECT id FROM outbox_events WHERE name = 'DeliveryFailed' AND payload->>'WebhookID' = $1`,
      [a.ID],
    );
    expect(raised).toEqual([]);
    await new Promise((r) => setTimeout(r, 1000));
    expect(t.sink.received.filter((x) => x.url === ops.path)).toEqual([]);
    await purge.release();
  }, 60_000);
});
