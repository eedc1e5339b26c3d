import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createTestEnv, TestEnv } from '../../test/helpers/test-env';
import { dataSourceOptions } from '../database/data-source';
import { DeliveryStore } from './delivery-store';

// The batched statements of the dispatcher against a real database (the spec's own, from the test template).
describe('DeliveryStore', () => {
  let env: TestEnv;
  let db: DataSource;
  let store: DeliveryStore;

  beforeAll(async () => {
    env = await createTestEnv();
    db = new DataSource(dataSourceOptions(env.databaseUrl));
    await db.initialize();
    store = new DeliveryStore(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await env?.drop();
  });

  async function webhook(events = ['AccessRequestApproved']): Promise<string> {
    const id = randomUUID();
    await db.query(`INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at) VALUES ($1, 'w', 'http://127.0.0.1:9/', $2, 'x', now() - interval '1 minute')`, [id, events]);
    return id;
  }
  async function event(name = 'AccessRequestApproved', occurredAt = new Date()): Promise<string> {
    const id = randomUUID();
    await db.query(`INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES ($1, $2, '{"ID":1}', $3)`, [id, name, occurredAt]);
    return id;
  }
  const unrelayed = async (ids: string[]): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1) AND relayed_at IS NULL`, [ids]))[0].n;
  /** Deliveries of `eventId` by webhook id. */
  async function deliveriesOf(eventId: string): Promise<string[]> {
    return (await db.query(`SELECT webhook_id FROM webhook_deliveries WHERE event_id = $1`, [eventId])).map((r: { webhook_id: string }) => r.webhook_id).sort();
  }
  async function relayAll(ids: string[]) {
    const r = await store.relay(ids, 500);
    return r.deliveries;
  }

  it('relays the named events in one statement: one delivery per subscribed webhook, none for an event nobody subscribes to', async () => {
    const [w1, w2] = [await webhook(), await webhook()];
    await webhook(['AccessRequestRejected']);
    const [e1, e2, other] = [await event(), await event(), await event('CredentialRegistered')];
    const r = await store.relay([e1, e2, other], 500);
    expect(r.events).toBe(3);
    expect(r.deliveries).toHaveLength(4);
    expect(r.deliveries.every((d) => d.attemptCount === 0)).toBe(true);
    expect(await deliveriesOf(e1)).toEqual([w1, w2].sort());
    expect(await deliveriesOf(e2)).toEqual([w1, w2].sort());
    expect(await deliveriesOf(other)).toEqual([]);
    expect(await unrelayed([e1, e2, other])).toBe(0);
  });

  it('relays an event once: claiming it again, even after its mark is cleared, creates nothing', async () => {
    const w = await webhook(['ApplicationRegistered']);
    const e = await event('ApplicationRegistered');
    expect((await relayAll([e])).map((d) => d.webhookId)).toEqual([w]);
    expect(await store.relay([e], 500)).toEqual({ events: 0, deliveries: [] });
    await db.query(`UPDATE outbox_events SET relayed_at = NULL WHERE id = $1`, [e]);
    expect(await store.relay([e], 500)).toEqual({ events: 1, deliveries: [] });
    expect(await deliveriesOf(e)).toEqual([w]);
  });

  it('the scan takes the oldest unrelayed events, at most `limit`, and leaves events locked by another relay alone', async () => {
    await db.query(`UPDATE outbox_events SET relayed_at = now() WHERE relayed_at IS NULL`);
    const old = await event('AccessRequestApproved', new Date(Date.now() - 60_000));
    const locked = await event('AccessRequestApproved', new Date(Date.now() - 120_000));
    const recent = await event();
    const other = await db.createQueryRunner();
    await other.startTransaction();
    try {
      await other.query(`SELECT id FROM outbox_events WHERE id = $1 FOR UPDATE`, [locked]);
      expect((await store.relay(null, 1)).events).toBe(1);
      expect(await unrelayed([old])).toBe(0);
      expect(await unrelayed([recent, locked])).toBe(2);
      expect((await store.relay([locked], 500)).events).toBe(0); // SKIP LOCKED: not waited for, not taken
    } finally {
      await other.rollbackTransaction();
      await other.release();
    }
    expect((await store.relay(null, 10)).events).toBe(2);
    expect(await unrelayed([recent, locked])).toBe(0);
  });

  it('claims each delivery once, even when one batch asks twice, and answers null for the rest', async () => {
    await webhook();
    const due = await relayAll([await event()]);
    const ids = due.map((d) => d.id);
    const claims = await store.claimMany([ids[0], ids[0], randomUUID(), ...ids.slice(1)]);
    expect(claims[0]?.id).toBe(ids[0]);
    expect(claims[1]).toBeNull();
    expect(claims[2]).toBeNull();
    expect(claims.slice(3).map((c) => c?.id)).toEqual(ids.slice(1));
    expect((await store.claimMany([ids[0]]))[0]).toBeNull(); // still leased
  });

  it('records attempts of several deliveries in one statement, each only under the claim it was made under', async () => {
    await webhook();
    const due = await relayAll([await event()]);
    const [a, b] = due.map((d) => d.id);
    const [ca, cb] = await store.claimMany([a, b]);
    const base = { number: 1, startedAt: new Date(), durationMs: 3, responseBody: 'ok', trigger: 'scheduled' as const };
    const results = await store.recordAttempts([
      { ...base, deliveryId: a, statusCode: 200, error: null, status: 'delivered', nextAttemptAt: null, lease: ca!.lease },
      { ...base, deliveryId: b, statusCode: 500, error: 'http_status', status: 'pending', nextAttemptAt: new Date(Date.now() + 5000), lease: cb!.lease },
      { ...base, deliveryId: randomUUID(), statusCode: 200, error: null, status: 'delivered', nextAttemptAt: null, lease: ca!.lease },
    ]);
    expect(results).toEqual(['recorded', 'recorded', 'superseded']);
    const rows = await db.query(
      `SELECT d.id, d.status, d.attempt_count, a.status_code, a.error, d.tableoid::regclass::text AS part, a.tableoid::regclass::text AS attempt_part
         FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE d.id = ANY($1)`,
      [[a, b]],
    );
    const byId = Object.fromEntries(rows.map((r: { id: string }) => [r.id, r]));
    const today = `_p${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    // finished: in today's partition with its attempt; still pending: in the open partition
    expect(byId[a]).toMatchObject({ status: 'delivered', attempt_count: 1, status_code: 200, error: null, part: `webhook_deliveries${today}`, attempt_part: `webhook_delivery_attempts${today}` });
    expect(byId[b]).toMatchObject({ status: 'pending', attempt_count: 1, status_code: 500, error: 'http_status', part: 'webhook_deliveries_open', attempt_part: 'webhook_delivery_attempts_open' });
  });

  it('drops the late answer of a worker whose claim lapsed and was taken over: one record per attempt', async () => {
    await webhook();
    const [d] = await relayAll([await event()]);
    const [frozen] = await store.claimMany([d.id]);
    // the frozen worker's lease runs out; another worker claims the same attempt and records it
    await db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`, [d.id]);
    const [taker] = await store.claimMany([d.id]);
    expect(taker?.lease).not.toBe(frozen!.lease);
    const attempt = { deliveryId: d.id, number: 1, startedAt: new Date(), durationMs: 3, responseBody: '', trigger: 'scheduled' as const, error: null, nextAttemptAt: null };
    expect(await store.recordAttempt({ ...attempt, statusCode: 200, status: 'delivered', lease: taker!.lease })).toBe('recorded');
    // the frozen one wakes up with its own answer
    expect(await store.recordAttempt({ ...attempt, statusCode: 500, status: 'failed', lease: frozen!.lease })).toBe('superseded');
    expect(await store.recordAttempts([{ ...attempt, statusCode: 500, status: 'failed', lease: frozen!.lease }, { ...attempt, statusCode: 500, status: 'failed', lease: taker!.lease }])).toEqual([
      'superseded',
      'superseded',
    ]);
    const attempts = await db.query(`SELECT number, status_code FROM webhook_delivery_attempts WHERE delivery_id = $1`, [d.id]);
    expect(attempts).toEqual([{ number: 1, status_code: 200 }]);
    const [row] = await db.query(`SELECT status, attempt_count FROM webhook_deliveries WHERE id = $1`, [d.id]);
    expect(row).toEqual({ status: 'delivered', attempt_count: 1 });
  });

  it('a retried delivery takes its earlier attempts along when it finishes, and back to the open partition when redelivered', async () => {
    await webhook();
    const [d] = await relayAll([await event()]);
    const attempt = { deliveryId: d.id, startedAt: new Date(), durationMs: 3, responseBody: '', trigger: 'scheduled' as const };
    let [c] = await store.claimMany([d.id]);
    await store.recordAttempt({ ...attempt, number: 1, statusCode: 500, error: 'http_status', status: 'pending', nextAttemptAt: new Date(), lease: c!.lease });
    [c] = await store.claimMany([d.id]);
    await store.recordAttempt({ ...attempt, number: 2, statusCode: 200, error: null, status: 'delivered', nextAttemptAt: null, lease: c!.lease });
    const parts = async () =>
      (await db.query(`SELECT DISTINCT tableoid::regclass::text AS p FROM webhook_delivery_attempts WHERE delivery_id = $1`, [d.id])).map((r: { p: string }) => r.p);
    const today = `webhook_delivery_attempts_p${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    expect(await parts()).toEqual([today]);
    const again = await store.redeliver(d.webhookId, d.id);
    expect(again?.status).toBe('pending');
    expect(await parts()).toEqual(['webhook_delivery_attempts_open']);
    const [open] = await db.query(`SELECT tableoid::regclass::text AS p FROM webhook_deliveries WHERE id = $1`, [d.id]);
    expect(open.p).toBe('webhook_deliveries_open');
  });
});
