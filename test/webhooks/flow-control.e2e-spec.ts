import { deliveryCount, emitEvent } from '../helpers/events';
import { createWebhook } from '../helpers/portal';
import { ReceivedRequest, Sink } from '../helpers/sink';
import { closeAfterEach } from '../helpers/use-fixture';
import { Service, useService } from '../helpers/use-service';
import { eventually } from '../helpers/eventually';

/** Distinct deliveries by webhook-id, first arrival of each. */
const distinct = (received: ReceivedRequest[]) => [
  ...new Map(received.map((r) => [r.headers['webhook-id'] as string, r])).values(),
];
const messageId = (r: ReceivedRequest): number => JSON.parse(r.body).Message.ID;

const subscribe = async (t: Service, url: string, extra: Record<string, unknown> = {}): Promise<string> =>
  (await createWebhook(t.portal, { Name: 'f', URL: url, ...extra })).ID;

/** A gauge's value in the Prometheus text of GET /metrics. */
async function gauge(t: Service, name: string): Promise<number> {
  const text = (await t.http.get('/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : NaN;
}

describe('flow control across worker processes (API and two workers apart)', () => {
  const api = useService({
    envVars: { WEBHOOK_RETRY_SCHEDULE: '0,0.1,0.1,0.1,0.1,0.1' },
    vars: { ROLE: 'api' },
    processes: [{ ROLE: 'worker' }, { ROLE: 'worker' }],
  });
  // the receivers of each test
  const closer = closeAfterEach();

  it('holds a RateLimit of 5/s within 20 % over 10 s with two workers; waiting is neither an attempt nor a failure; an unlimited webhook is not held up', async () => {
    const limited = closer.adopt(await Sink.start());
    const free = closer.adopt(await Sink.start());
    const id = await subscribe(api, limited.url(), { RateLimit: 5 });
    const freeId = await subscribe(api, free.url());
    const N = 70;
    for (let i = 0; i < N; i++) await emitEvent(api, 'AccessRequestApproved', { ID: i });

    // the unlimited webhook gets everything at once, long before the limited one is through
    await free.waitFor((r) => distinct(r).length >= N, 20_000, `all ${N} on the unlimited webhook`);
    expect(distinct(limited.received).length).toBeLessThan(N / 2);
    expect(await gauge(api, 'webhook_deliveries_rate_limited')).toBeGreaterThan(0);

    await limited.waitFor((r) => distinct(r).length >= N, 40_000, `all ${N} on the limited webhook`);
    const arrivals = distinct(limited.received)
      .map((r) => r.at)
      .sort((a, b) => a - b);
    const t0 = arrivals[0];
    const inTenSeconds = arrivals.filter((at) => at >= t0 && at < t0 + 10_000).length;
    expect(inTenSeconds).toBeGreaterThanOrEqual(40);
    expect(inTenSeconds).toBeLessThanOrEqual(60);
    // every 10 s span of the run holds it too; a one-second window lets at most two windows' worth meet at a boundary
    const within = (start: number, ms: number) => arrivals.filter((at) => at >= start && at < start + ms).length;
    for (const start of arrivals.filter((at) => at + 10_000 <= arrivals[N - 1])) {
      const n = within(start, 10_000);
      expect({ start: start - t0, n, ok: n >= 40 && n <= 60 }).toEqual({ start: start - t0, n, ok: true });
    }
    for (const start of arrivals) expect(within(start, 1000)).toBeLessThanOrEqual(10);
    expect(arrivals[N - 1] - t0).toBeGreaterThanOrEqual((N / 5 - 2) * 1000);

    // waiting its turn cost no attempt: one attempt each, every one delivered
    const [rows] = await api.db.query(
      `SELECT count(*)::int AS deliveries, count(*) FILTER (WHERE status = 'delivered' AND attempt_count = 1)::int AS once,
              (SELECT count(*)::int FROM webhook_delivery_attempts WHERE webhook_id = $1) AS attempts
         FROM webhook_deliveries WHERE webhook_id = $1`,
      [id],
    );
    expect(rows).toEqual({ deliveries: N, once: N, attempts: N });
    expect(limited.received.length).toBe(N);
    const [held] = await api.db.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE held IS NOT NULL AND webhook_id = $1`,
      [id],
    );
    expect(held.n).toBe(0);
    expect(freeId).toBeDefined();
  }, 90_000);

  it('sends an Ordered webhook its 50 events one at a time in event order while one of them fails twice first', async () => {
    const sink = closer.adopt(await Sink.start());
    const tries = new Map<number, number>();
    sink.responder = (r) => {
      const n = messageId(r);
      tries.set(n, (tries.get(n) ?? 0) + 1);
      if (n === 17 && tries.get(n)! <= 2) return { status: 500, body: 'not yet' };
      return { status: 200, delayMs: Math.floor(Math.random() * 5) };
    };
    const id = await subscribe(api, sink.url(), { Ordered: true });
    for (let i = 0; i < 50; i++) await emitEvent(api, 'AccessRequestApproved', { ID: i });
    await sink.waitFor((r) => r.filter((x) => messageId(x) === 49).length >= 1, 60_000, 'the 50th event');
    await eventually(async () => (await deliveryCount(api, id, 'delivered')) === 50, 10_000, 'all 50 delivered');

    const expected = [...Array(50).keys()].flatMap((i) => (i === 17 ? [17, 17, 17] : [i]));
    // in order, and one at a time: never a request for an event before the previous one was answered 2xx
    expect(sink.received.map(messageId)).toEqual(expected);
  }, 90_000);

  it('an Ordered webhook blocked by a failing head holds up neither unordered nor other ordered webhooks', async () => {
    const stuck = closer.adopt(await Sink.start());
    const other = closer.adopt(await Sink.start());
    const free = closer.adopt(await Sink.start());
    stuck.responder = () => ({ status: 503, headers: { 'retry-after': '3600' } });
    const stuckId = await subscribe(api, stuck.url(), { Ordered: true, Events: ['AccessRequestRejected'] });
    await subscribe(api, other.url(), { Ordered: true, Events: ['AccessRequestRejected'] });
    await subscribe(api, free.url(), { Events: ['AccessRequestRejected'] });
    for (let i = 0; i < 20; i++) await emitEvent(api, 'AccessRequestRejected', { ID: i });

    await other.waitFor((r) => distinct(r).length >= 20, 30_000, 'all 20 on the other ordered webhook');
    await free.waitFor((r) => distinct(r).length >= 20, 30_000, 'all 20 on the unordered webhook');
    expect(distinct(other.received).map(messageId)).toEqual([...Array(20).keys()]);
    // the stuck one got its head once, and nothing behind it
    expect(stuck.received.map(messageId)).toEqual([0]);
    const stats = (await api.portal.get(`/portal-api/webhooks/${stuckId}/stats`)).body;
    expect(stats).toMatchObject({ Retrying: 1, Pending: 19 });
    expect(await gauge(api, 'webhook_ordered_blocked')).toBe(1);
    // each of the 19 behind the head was claimed, found not to be the head and given back: it waits marked, out of the
    // index the reconciler reads in due order
    const waiting = async () =>
      (
        await api.db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' AND held = 'order'`,
          [stuckId],
        )
      )[0].n;
    await eventually(async () => (await waiting()) === 19, 10_000, 'the 19 behind the head marked as waiting');

    // made unordered, the webhook sends them at once, each on its own (the head still waits for its retry)
    stuck.responder = () => ({ status: 200 });
    expect((await api.portal.put(`/portal-api/webhooks/${stuckId}`, { Ordered: false })).status).toBe(200);
    expect(await waiting()).toBe(0);
    await stuck.waitFor((r) => distinct(r).length >= 20, 30_000, 'the 19 behind the head');
    expect(
      distinct(stuck.received)
        .map(messageId)
        .sort((a, b) => a - b),
    ).toEqual([...Array(20).keys()]);
  }, 90_000);
});
