import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { useDataSource } from '../../test/helpers/use-service';
import { Sql } from '../database/sql';
import { DayPartitions } from '../database/day-partitions';
import { DeliveryKey, DeliveryStore, RelayClaim } from './delivery.store';
import { WebhookStore } from './webhook.store';

// The batched statements of the dispatcher against a real database (the spec's own, from the test template).
describe('DeliveryStore', () => {
  const fixture = useDataSource();
  let db: DataSource;
  let store: DeliveryStore;
  let webhooks: WebhookStore;
  let sql: Sql;
  /** Partition keys of the deliveries the spec's relays made. */
  const atOf = new Map<string, string>();
  const named = (ids: string[]): RelayClaim => ({ ids, from: null, to: null });
  const keys = (ids: string[]): DeliveryKey[] => ids.map((id) => ({ id, at: atOf.get(id) ?? null }));
  const at = (id: string): string => atOf.get(id)!;

  beforeAll(async () => {
    db = fixture.db;
    sql = fixture.sql;
    store = new DeliveryStore(sql, new DayPartitions(sql));
    webhooks = new WebhookStore(sql);
    const relay = store.relay.bind(store);
    store.relay = async (...args) => {
      const r = await relay(...args);
      for (const d of r.deliveries) atOf.set(d.id, d.at);
      return r;
    };
  });

  async function webhook(events = ['AccessRequestApproved']): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at) VALUES ($1, 'w', 'http://127.0.0.1:9/', $2, 'x', now() - interval '1 minute')`,
      [id, events],
    );
    return id;
  }
  async function event(name = 'AccessRequestApproved', occurredAt = new Date()): Promise<string> {
    const id = randomUUID();
    await db.query(`INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES ($1, $2, '{"ID":1}', $3)`, [
      id,
      name,
      occurredAt,
    ]);
    return id;
  }
  const unrelayed = async (ids: string[]): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE id = ANY($1) AND relayed_at IS NULL`, [ids]))[0]
      .n;
  /** Deliveries of `eventId` by webhook id. */
  async function deliveriesOf(eventId: string): Promise<string[]> {
    return (await db.query(`SELECT webhook_id FROM webhook_deliveries WHERE event_id = $1`, [eventId]))
      .map((r: { webhook_id: string }) => r.webhook_id)
      .sort();
  }
  async function relayAll(ids: string[]) {
    const r = await store.relay(named(ids), 500);
    return r.deliveries;
  }

  it('relays the named events in one statement: one delivery per subscribed webhook, none for an event nobody subscribes to', async () => {
    const [w1, w2] = [await webhook(), await webhook()];
    await webhook(['AccessRequestRejected']);
    const [e1, e2, other] = [await event(), await event(), await event('CredentialRegistered')];
    const r = await store.relay(named([e1, e2, other]), 500);
    expect(r.events).toBe(3);
    expect(r.deliveries).toHaveLength(4);
    expect(r.deliveries.every((d) => d.attemptCount === 0)).toBe(true);
    expect(await deliveriesOf(e1)).toEqual([w1, w2].sort());
    expect(await deliveriesOf(e2)).toEqual([w1, w2].sort());
    expect(await deliveriesOf(other)).toEqual([]);
    expect(await unrelayed([e1, e2, other])).toBe(0);
  });

  it("hands each new delivery its event and the event's trace context (null when it was recorded untraced)", async () => {
    const w = await webhook(['AccessRequestCreated']);
    const traced = await event('AccessRequestCreated');
    const untraced = await event('AccessRequestCreated');
    const carrier = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=x' };
    await db.query(`UPDATE outbox_events SET trace_context = $2 WHERE id = $1`, [traced, JSON.stringify(carrier)]);
    const r = await store.relay(named([traced, untraced]), 500);
    expect(r.deliveries).toEqual(
      expect.arrayContaining([
        {
          id: expect.any(String),
          at: expect.any(String),
          webhookId: w,
          attemptCount: 0,
          eventId: traced,
          eventName: 'AccessRequestCreated',
          eventTrace: carrier,
        },
        {
          id: expect.any(String),
          at: expect.any(String),
          webhookId: w,
          attemptCount: 0,
          eventId: untraced,
          eventName: 'AccessRequestCreated',
          eventTrace: null,
        },
      ]),
    );
    expect(r.deliveries).toHaveLength(2);
  });

  it('relays an event once: claiming it again, even after its mark is cleared, creates nothing', async () => {
    const w = await webhook(['ApplicationRegistered']);
    const e = await event('ApplicationRegistered');
    expect((await relayAll([e])).map((d) => d.webhookId)).toEqual([w]);
    expect(await store.relay(named([e]), 500)).toEqual({ events: 0, refused: 0, deliveries: [] });
    await db.query(`UPDATE outbox_events SET relayed_at = NULL WHERE id = $1`, [e]);
    expect(await store.relay(named([e]), 500)).toEqual({ events: 1, refused: 0, deliveries: [] });
    expect(await deliveriesOf(e)).toEqual([w]);
  });

  it('the scan takes the oldest unrelayed events, at most `limit`, and leaves events locked by another relay alone', async () => {
    await db.query(`UPDATE outbox_events SET relayed_at = now() WHERE relayed_at IS NULL`);
    const old = await event('AccessRequestApproved', new Date(Date.now() - 60_000));
    const locked = await event('AccessRequestApproved', new Date(Date.now() - 120_000));
    const recent = await event();
    const other = db.createQueryRunner();
    await other.startTransaction();
    try {
      await other.query(`SELECT id FROM outbox_events WHERE id = $1 FOR UPDATE`, [locked]);
      expect((await store.relay(null, 1)).events).toBe(1);
      expect(await unrelayed([old])).toBe(0);
      expect(await unrelayed([recent, locked])).toBe(2);
      expect((await store.relay(named([locked]), 500)).events).toBe(0); // SKIP LOCKED: not waited for, not taken
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
    const claims = await store.claimMany(keys([ids[0], ids[0], randomUUID(), ...ids.slice(1)]));
    expect(claims[0]?.id).toBe(ids[0]);
    expect(claims[1]).toBeNull();
    expect(claims[2]).toBeNull();
    expect(claims.slice(3).map((c) => c?.id)).toEqual(ids.slice(1));
    expect((await store.claimMany(keys([ids[0]])))[0]).toBeNull(); // still leased
  });

  it('gives back unsent only what the claim of its token still holds, by key or by id alone', async () => {
    await webhook();
    await webhook();
    await webhook();
    const [a, b, c] = (await relayAll([await event()])).map((d) => d.id);
    const token = randomUUID();
    const claims = await store.claimMany(keys([a, b]), token);
    expect(claims.map((d) => d?.claim)).toEqual([token, token]);
    const [other] = await store.claimMany(keys([c])); // another claim's
    // b's attempt is recorded under the claim: no longer held by it
    await store.recordAttempt({
      deliveryId: b,
      at: at(b),
      webhookId: claims[1]!.webhookId,
      number: 1,
      startedAt: new Date(),
      statusCode: 200,
      durationMs: 3,
      error: null,
      responseBody: '',
      trigger: 'scheduled',
      status: 'delivered',
      nextAttemptAt: null,
      lease: claims[1]!.lease,
    });
    const of = (ids: string[], t: string, k = keys) => k(ids).map((key) => ({ key, token: t }));
    // c is held by another claim: asked with this token, it stays
    expect(await store.releaseClaims(of([a, b, c], token))).toBe(1);
    const state = async () =>
      (
        await db.query(
          `SELECT id, status, attempt_count, locked_until IS NOT NULL AS leased FROM webhook_deliveries WHERE id = ANY($1)`,
          [[a, b, c]],
        )
      ).sort((x: { id: string }, y: { id: string }) => [a, b, c].indexOf(x.id) - [a, b, c].indexOf(y.id));
    expect(await state()).toEqual([
      { id: a, status: 'pending', attempt_count: 0, leased: false },
      { id: b, status: 'delivered', attempt_count: 1, leased: false },
      { id: c, status: 'pending', attempt_count: 0, leased: true },
    ]);
    expect(await store.releaseClaims(of([a], token))).toBe(0); // given back once
    // due again at once: claimed afresh, as the same attempt
    const [again] = await store.claimMany([{ id: a, at: null }], token);
    expect(again).toMatchObject({ id: a, attemptCount: 0 });
    const byId = (ids: string[]) => ids.map((id) => ({ id, at: null }));
    // each delivery with its own token: c's pair names this token, so c stays though its own token is asked too
    expect(
      await store.releaseClaims([...of([a], token, byId), ...of([c], token, byId), ...of([b], other!.claim)]),
    ).toBe(1);
    expect(await store.releaseClaims(of([c], other!.claim))).toBe(1);
  });

  it('records attempts of several deliveries in one statement, each only under the claim it was made under', async () => {
    await webhook();
    const due = await relayAll([await event()]);
    const [a, b] = due.map((d) => d.id);
    const [wa, wb] = due.map((d) => d.webhookId);
    const [ca, cb] = await store.claimMany(keys([a, b]));
    const base = { number: 1, startedAt: new Date(), durationMs: 3, responseBody: 'ok', trigger: 'scheduled' as const };
    const results = await store.recordAttempts([
      {
        ...base,
        deliveryId: a,
        at: at(a),
        webhookId: wa,
        statusCode: 200,
        error: null,
        status: 'delivered',
        nextAttemptAt: null,
        lease: ca!.lease,
      },
      {
        ...base,
        deliveryId: b,
        at: at(b),
        webhookId: wb,
        statusCode: 500,
        error: 'http_status',
        status: 'pending',
        nextAttemptAt: new Date(Date.now() + 5000),
        lease: cb!.lease,
      },
      {
        ...base,
        deliveryId: randomUUID(),
        at: at(a),
        webhookId: wa,
        statusCode: 200,
        error: null,
        status: 'delivered',
        nextAttemptAt: null,
        lease: ca!.lease,
      },
    ]);
    expect(results).toEqual(['recorded', 'recorded', 'superseded']);
    const rows = await db.query(
      `SELECT d.id, d.status, d.attempt_count, a.status_code, a.error, a.webhook_id, d.tableoid::regclass::text AS part, a.tableoid::regclass::text AS attempt_part
         FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE d.id = ANY($1)`,
      [[a, b]],
    );
    const byId = Object.fromEntries(rows.map((r: { id: string }) => [r.id, r]));
    const today = `_p${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    // finished or still pending: in the partition of its event's day, with its attempt
    expect(byId[a]).toMatchObject({
      status: 'delivered',
      attempt_count: 1,
      status_code: 200,
      error: null,
      webhook_id: wa,
      part: `webhook_deliveries${today}`,
      attempt_part: `webhook_delivery_attempts${today}`,
    });
    expect(byId[b]).toMatchObject({
      status: 'pending',
      attempt_count: 1,
      status_code: 500,
      error: 'http_status',
      webhook_id: wb,
      part: `webhook_deliveries${today}`,
      attempt_part: `webhook_delivery_attempts${today}`,
    });
  });

  it('never relays an operational event to the webhook it is about, and relays it to the others subscribed', async () => {
    const about = await webhook(['WebhookDisabled']);
    const operator = await webhook(['WebhookDisabled']);
    const id = randomUUID();
    await db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES ($1, 'WebhookDisabled', $2, now())`,
      [id, JSON.stringify({ WebhookID: about })],
    );
    await store.relay(named([id]), 500);
    const got = await deliveriesOf(id);
    expect(got).toContain(operator);
    expect(got).not.toContain(about);
  });

  it('claims only the oldest pending delivery of an ordered webhook, the next once it is done; a held delivery keeps its attempt count', async () => {
    const w = await webhook(['ApplicationRegistered']);
    await db.query(`UPDATE webhooks SET ordered = true WHERE id = $1`, [w]);
    const events = [
      await event('ApplicationRegistered'),
      await event('ApplicationRegistered'),
      await event('ApplicationRegistered'),
    ];
    const due = (await relayAll(events)).filter((d) => d.webhookId === w);
    const rows: { id: string }[] = await db.query(
      `SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY event_seq`,
      [w],
    );
    const [first, second, third] = rows.map((r) => r.id);
    expect(due.map((d) => d.id).sort()).toEqual([first, second, third].sort());
    // all three asked at once, in any order: only the first is taken
    const claims = await store.claimMany(keys([third, second, first]));
    expect(claims.map((c) => c?.id ?? null)).toEqual([null, null, first]);
    expect(claims[2]).toMatchObject({
      ordered: true,
      rateLimit: null,
      failingSince: null,
      eventName: 'ApplicationRegistered',
    });
    expect(await store.nextInOrder(w)).toMatchObject({ id: first });
    // the first waits for a retry: the others still wait behind it
    const base = {
      webhookId: w,
      startedAt: new Date(),
      durationMs: 1,
      responseBody: '',
      trigger: 'scheduled' as const,
    };
    expect(
      await store.recordAttempt({
        ...base,
        deliveryId: first,
        at: at(first),
        number: 1,
        statusCode: 500,
        error: 'http_status',
        status: 'pending',
        nextAttemptAt: new Date(),
        lease: claims[2]!.lease,
      }),
    ).toBe('recorded');
    expect((await store.claimMany(keys([second, third]))).every((c) => c === null)).toBe(true);
    const [retry] = await store.claimMany(keys([first]));
    expect(
      await store.recordAttempt({
        ...base,
        deliveryId: first,
        at: at(first),
        number: 2,
        statusCode: 200,
        error: null,
        status: 'delivered',
        nextAttemptAt: null,
        lease: retry!.lease,
      }),
    ).toBe('recorded');
    expect(await store.nextInOrder(w)).toMatchObject({ id: second, attemptCount: 0 });
    const [next] = await store.claimMany(keys([second]));
    expect(next?.id).toBe(second);
    // held back by its rate limit: no attempt, due later, claimable again then
    await store.hold({ id: second, at: at(second) }, next!.lease, new Date(Date.now() + 60_000));
    const [held] = await db.query(
      `SELECT attempt_count, held, locked_until, next_attempt_at > now() AS later FROM webhook_deliveries WHERE id = $1`,
      [second],
    );
    expect(held).toEqual({ attempt_count: 0, held: 'rate_limit', locked_until: null, later: true });
    expect((await store.claimMany(keys([second])))[0]).toBeNull(); // not due yet
    await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [second]);
    expect((await store.claimMany(keys([second])))[0]?.id).toBe(second);
    const [claimed] = await db.query(`SELECT held FROM webhook_deliveries WHERE id = $1`, [second]);
    expect(claimed.held).toBeNull();
  });

  it('switches a failing webhook off only once its failures have lasted long enough, and only once', async () => {
    const w = await webhook();
    await webhooks.markFailing(w, new Date(Date.now() - 10_000));
    await webhooks.markFailing(w, new Date()); // already running: unchanged
    const [row] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [w]);
    expect(Date.now() - row.failing_since.getTime()).toBeGreaterThanOrEqual(9_000);
    expect(await webhooks.disable(sql, w, 'failing', 60_000)).toBeNull();
    const off = await webhooks.disable(sql, w, 'failing', 5_000);
    expect(off).toMatchObject({ id: w, name: 'w', url: 'http://127.0.0.1:9/', disabledAt: expect.any(Date) });
    expect(await webhooks.disable(sql, w, 'failing', 5_000)).toBeNull();
    expect(await webhooks.disable(sql, w, 'gone')).toBeNull();
    const [after] = await db.query(`SELECT active, disabled_reason FROM webhooks WHERE id = $1`, [w]);
    expect(after).toEqual({ active: false, disabled_reason: 'failing' });
    // a success stops the clock; without it a webhook is never switched off for failing
    const healthy = await webhook();
    await webhooks.markFailing(healthy, new Date(Date.now() - 10_000));
    await webhooks.markHealthy(healthy);
    expect(await webhooks.disable(sql, healthy, 'failing', 1)).toBeNull();
  });

  it('relays an event meant for one webhook to that webhook alone, whatever it subscribes to, active or not', async () => {
    const subscribed = await webhook(['AccessRequestApproved']);
    const target = await webhook(['UserRegistered']);
    await db.query(`UPDATE webhooks SET active = false WHERE id = $1`, [target]);
    const id = randomUUID();
    await db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at, target_webhook_id) VALUES ($1, 'AccessRequestApproved', '{}', now(), $2)`,
      [id, target],
    );
    const r = await store.relay(named([id]), 500);
    expect(r.deliveries.map((d) => d.webhookId)).toEqual([target]);
    expect(await deliveriesOf(id)).toEqual([target]);
    expect(await deliveriesOf(id)).not.toContain(subscribed);
    // a target that no longer exists gets nothing, and the event is still marked relayed
    const gone = randomUUID();
    await db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at, target_webhook_id) VALUES ($1, 'WebhookTest', '{}', now(), $2)`,
      [gone, randomUUID()],
    );
    expect((await store.relay(named([gone]), 500)).deliveries).toEqual([]);
    expect(await unrelayed([gone])).toBe(0);
  });

  it('hands the claim the previous key only while its grace period lasts, and erases it once it is over', async () => {
    const w = await webhook(['PasswordReset']);
    const deliveryOf = async () => (await relayAll([await event('PasswordReset')])).find((d) => d.webhookId === w)!.id;
    const [d1, d2] = [await deliveryOf(), await deliveryOf()];
    await db.query(
      `UPDATE webhooks SET signature_scheme = 'v1a', previous_secret_encrypted = 'old', previous_signature_scheme = 'v1', previous_secret_expires_at = now() + interval '1 hour' WHERE id = $1`,
      [w],
    );
    const [during] = await store.claimMany(keys([d1]));
    expect(during).toMatchObject({
      secretEncrypted: 'x',
      signatureScheme: 'v1a',
      previousSecretEncrypted: 'old',
      previousSignatureScheme: 'v1',
    });
    expect(await webhooks.eraseExpiredSigningKeys()).toBe(0);

    // expired but not erased yet: no longer used
    await db.query(`UPDATE webhooks SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [w]);
    const [after] = await store.claimMany(keys([d2]));
    expect(after).toMatchObject({
      signatureScheme: 'v1a',
      previousSecretEncrypted: null,
      previousSignatureScheme: null,
    });
    expect(await webhooks.eraseExpiredSigningKeys()).toBe(1);
    const [row] = await db.query(
      `SELECT previous_secret_encrypted, previous_signature_scheme, previous_secret_expires_at FROM webhooks WHERE id = $1`,
      [w],
    );
    expect(row).toEqual({
      previous_secret_encrypted: null,
      previous_signature_scheme: null,
      previous_secret_expires_at: null,
    });
  });

  it("records an attempt cut off with its worker, and drops that worker's late answer: one record per attempt", async () => {
    await webhook();
    const [d] = await relayAll([await event()]);
    const [frozen] = await store.claimMany(keys([d.id]));
    expect(await store.recordCutOff([{ id: d.id, at: at(d.id) }], 8)).toEqual([]); // its lease still runs
    // the frozen worker's lease runs out: no one claims the delivery before its cut-off attempt is recorded
    await db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`, [d.id]);
    expect(await store.claimMany(keys([d.id]))).toEqual([null]);
    expect(await store.recordCutOff([{ id: d.id, at: at(d.id) }], 8)).toEqual([
      { id: d.id, at: at(d.id), webhookId: d.webhookId, number: 1, final: false },
    ]);
    expect(await store.recordCutOff([{ id: d.id, at: at(d.id) }], 8)).toEqual([]); // recorded once
    const [taker] = await store.claimMany(keys([d.id]));
    expect(taker).toMatchObject({ attemptCount: 1 });
    const attempt = {
      deliveryId: d.id,
      at: at(d.id),
      webhookId: d.webhookId,
      startedAt: new Date(),
      durationMs: 3,
      responseBody: '',
      trigger: 'scheduled' as const,
      error: null,
      nextAttemptAt: null,
    };
    expect(
      await store.recordAttempt({ ...attempt, number: 2, statusCode: 200, status: 'delivered', lease: taker!.lease }),
    ).toBe('recorded');
    // the frozen one wakes up with its own answer
    expect(
      await store.recordAttempt({ ...attempt, number: 1, statusCode: 500, status: 'failed', lease: frozen!.lease }),
    ).toBe('superseded');
    expect(
      await store.recordAttempts([
        { ...attempt, number: 1, statusCode: 500, status: 'failed', lease: frozen!.lease },
        { ...attempt, number: 2, statusCode: 500, status: 'failed', lease: taker!.lease },
      ]),
    ).toEqual(['superseded', 'superseded']);
    const attempts = await db.query(
      `SELECT number, status_code, error, response_body, trigger, duration_ms, started_at < $2 AS started_before_lease
         FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY number`,
      [d.id, new Date()],
    );
    expect(attempts).toEqual([
      // the webhook's 30 s timeout and the claim's 5 s of slack: the whole lease
      {
        number: 1,
        status_code: null,
        error: 'timeout',
        response_body: '',
        trigger: 'scheduled',
        duration_ms: 35_000,
        started_before_lease: true,
      },
      {
        number: 2,
        status_code: 200,
        error: null,
        response_body: '',
        trigger: 'scheduled',
        duration_ms: 3,
        started_before_lease: true,
      },
    ]);
    const [row] = await db.query(`SELECT status, attempt_count FROM webhook_deliveries WHERE id = $1`, [d.id]);
    expect(row).toEqual({ status: 'delivered', attempt_count: 2 });
  });

  it('fails a delivery whose cut-off attempt was the last the schedule allows, or a manual one', async () => {
    await webhook();
    const [last, manual] = await relayAll([await event(), await event()]);
    await store.claimMany(keys([last.id, manual.id]));
    await db.query(`UPDATE webhook_deliveries SET attempt_count = 7 WHERE id = $1`, [last.id]);
    await db.query(`UPDATE webhook_deliveries SET next_trigger = 'manual', attempt_count = 2 WHERE id = $1`, [
      manual.id,
    ]);
    await db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = ANY($1)`, [
      [last.id, manual.id],
    ]);
    const cut = await store.recordCutOff(
      [last, manual].map((d) => ({ id: d.id, at: at(d.id) })),
      8,
    );
    expect(cut.map((c) => [c.id, c.number, c.final]).sort()).toEqual(
      [
        [last.id, 8, true],
        [manual.id, 3, true],
      ].sort(),
    );
    const rows = await db.query(
      `SELECT d.id, d.status, d.attempt_count, d.next_attempt_at, d.locked_until, a.trigger, a.error
         FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id WHERE d.id = ANY($1) ORDER BY d.id`,
      [[last.id, manual.id]],
    );
    expect(rows).toEqual(
      [
        {
          id: last.id,
          status: 'failed',
          attempt_count: 8,
          next_attempt_at: null,
          locked_until: null,
          trigger: 'scheduled',
          error: 'timeout',
        },
        {
          id: manual.id,
          status: 'failed',
          attempt_count: 3,
          next_attempt_at: null,
          locked_until: null,
          trigger: 'manual',
          error: 'timeout',
        },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect(await store.claimMany(keys([last.id, manual.id]))).toEqual([null, null]);
  });

  it("a delivery and its attempts stay in the partition of their event's day through retries, finishing and redelivery", async () => {
    const w = await webhook();
    await db.query(`UPDATE webhooks SET created_at = now() - interval '3 days' WHERE id = $1`, [w]);
    const occurred = new Date(Date.now() - 2 * 86_400_000);
    await db.query(`SELECT delivery_log_ensure_partitions($1::date, $1::date)`, [occurred.toISOString().slice(0, 10)]);
    const [d] = (await relayAll([await event('AccessRequestApproved', occurred)])).filter((x) => x.webhookId === w);
    expect(new Date(d.at).getTime()).toBe(occurred.getTime());
    const attempt = {
      deliveryId: d.id,
      at: d.at,
      webhookId: d.webhookId,
      startedAt: new Date(),
      durationMs: 3,
      responseBody: '',
      trigger: 'scheduled' as const,
    };
    const day = occurred.toISOString().slice(0, 10).replace(/-/g, '');
    const where = async () =>
      (
        await db.query(
          `SELECT tableoid::regclass::text AS p FROM webhook_deliveries WHERE id = $1
           UNION SELECT tableoid::regclass::text FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY 1`,
          [d.id],
        )
      ).map((r: { p: string }) => r.p);
    const home = [`webhook_deliveries_p${day}`, `webhook_delivery_attempts_p${day}`];
    let [c] = await store.claimMany([d]);
    await store.recordAttempt({
      ...attempt,
      number: 1,
      statusCode: 500,
      error: 'http_status',
      status: 'pending',
      nextAttemptAt: new Date(),
      lease: c!.lease,
    });
    expect(await where()).toEqual(home);
    [c] = await store.claimMany([d]);
    await store.recordAttempt({
      ...attempt,
      number: 2,
      statusCode: 200,
      error: null,
      status: 'delivered',
      nextAttemptAt: null,
      lease: c!.lease,
    });
    expect(await where()).toEqual(home);
    const again = await store.redeliver(d.webhookId, d.id);
    expect(again).toMatchObject({ status: 'pending', attempt_count: 2, at: d.at });
    expect(await where()).toEqual(home);
    // a second redelivery of a pending delivery changes nothing
    expect(await store.redeliver(d.webhookId, d.id)).toBeNull();
  });
});
