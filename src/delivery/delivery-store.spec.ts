import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createTestEnv, TestEnv } from '../../test/helpers/test-env';
import { dataSourceOptions } from '../database/data-source';
import { DeliveryStore } from './delivery-store';

// The batched statements of the dispatcher against a real database (the spec's own, from the test template).
describe('DeliveryStore batches', () => {
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
  async function event(name = 'AccessRequestApproved'): Promise<string> {
    const id = randomUUID();
    await db.query(`INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at) VALUES ($1, $2, '{"ID":1}', now(), now())`, [id, name]);
    return id;
  }

  it('fans several events out in one go, once per (event, webhook), and re-running returns the pending ones', async () => {
    const [w1, w2] = [await webhook(), await webhook()];
    await webhook(['AccessRequestRejected']);
    const [e1, e2, other] = [await event(), await event(), await event('CredentialRegistered')];
    const first = await store.fanOutMany([e1, e2, other]);
    expect(first.map((d) => d.map((x) => x.webhookId).sort())).toEqual([[w1, w2].sort(), [w1, w2].sort(), []]);
    const again = await store.fanOutMany([e2, e1]);
    expect(again[0].map((d) => d.id).sort()).toEqual(first[1].map((d) => d.id).sort());
    expect(again[1].map((d) => d.id).sort()).toEqual(first[0].map((d) => d.id).sort());
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1) AND fanned_out_at IS NOT NULL`, [[e1, e2, other]]);
    expect(n).toBe(3);
  });

  it('claims each delivery once, even when one batch asks twice, and answers null for the rest', async () => {
    await webhook();
    const [due] = await store.fanOutMany([await event()]);
    const ids = due.map((d) => d.id);
    const claims = await store.claimMany([ids[0], ids[0], randomUUID(), ...ids.slice(1)]);
    expect(claims[0]?.id).toBe(ids[0]);
    expect(claims[1]).toBeNull();
    expect(claims[2]).toBeNull();
    expect(claims.slice(3).map((c) => c?.id)).toEqual(ids.slice(1));
    expect((await store.claimMany([ids[0]]))[0]).toBeNull(); // still leased
  });

  it('records attempts of several deliveries in one statement, and on its own the one that cannot be recorded', async () => {
    await webhook();
    const [due] = await store.fanOutMany([await event()]);
    const [a, b] = due.map((d) => d.id);
    const base = { number: 1, startedAt: new Date(), durationMs: 3, responseBody: 'ok', trigger: 'scheduled' as const };
    const results = await store.recordAttempts([
      { ...base, deliveryId: a, statusCode: 200, error: null, status: 'delivered', nextAttemptAt: null },
      { ...base, deliveryId: b, statusCode: 500, error: 'http_status', status: 'pending', nextAttemptAt: new Date(Date.now() + 5000) },
      { ...base, deliveryId: randomUUID(), statusCode: 200, error: null, status: 'delivered', nextAttemptAt: null },
    ]);
    expect(results[0]).toBeNull();
    expect(results[1]).toBeNull();
    expect(results[2]).toBeInstanceOf(Error); // no such delivery: the attempt's foreign key fails, alone
    const rows = await db.query(
      `SELECT d.id, d.status, d.attempt_count, a.status_code, a.error FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE d.id = ANY($1)`,
      [[a, b]],
    );
    const byId = Object.fromEntries(rows.map((r: { id: string }) => [r.id, r]));
    expect(byId[a]).toMatchObject({ status: 'delivered', attempt_count: 1, status_code: 200, error: null });
    expect(byId[b]).toMatchObject({ status: 'pending', attempt_count: 1, status_code: 500, error: 'http_status' });
  });
});
