import { Sql } from '../../src/database/sql';
import { DeliveryProcessor } from '../../src/webhooks/worker/delivery.processor';
import { deliveryCount, emitEvent } from '../helpers/events';
import { createWebhook } from '../helpers/portal';
import { ServiceProcess } from '../helpers/service-process';
import { ReceivedRequest } from '../helpers/sink';
import { deleteQueueKeys } from '../helpers/test-env';
import { closeAfterEach } from '../helpers/use-fixture';
import { Service, startService } from '../helpers/use-service';
import { eventually } from '../helpers/eventually';

const msg = (i: number) => ({ ID: i, AppID: 1, UserID: 1, Status: 'approved' });
const ids = (received: ReceivedRequest[]) => new Set(received.map((r) => r.headers['webhook-id'] as string));

const RETRIES = { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1' };

const subscribe = async (t: Service, extra: Record<string, unknown> = {}): Promise<string> =>
  (await createWebhook(t.portal, { Name: 'r', URL: t.sink.url(), ...extra })).ID;

describe('no lost events', () => {
  // each test runs a service of its own, with its own receiver
  const closer = closeAfterEach();

  it('delivers everything when the worker is SIGKILLed mid-batch and another one starts', async () => {
    const api = closer.adopt(await startService({ envVars: RETRIES, vars: { ROLE: 'api' }, receiver: true }));
    const sink = api.sink;
    sink.responder = () => ({ status: 200, delayMs: 100 });
    const webhookId = await subscribe(api, { Timeout: 2 });
    const N = 150;
    // the whole batch is committed before any worker runs, so how fast the events are emitted cannot decide how
    // much of it is delivered before the kill: a worker taking 4 at a time, 100 ms each, is killed after 20
    for (let i = 0; i < N; i++) await emitEvent(api, 'AccessRequestApproved', msg(i));
    const worker = closer.adopt(
      await ServiceProcess.start({ ...api.env.vars, ROLE: 'worker', WEBHOOK_CONCURRENCY: '4' }),
    );
    await sink.waitFor((r) => r.length >= 20, 30_000, 'the batch to be under way');
    await worker.kill('SIGKILL');
    const atKill = ids(sink.received).size;
    expect(atKill).toBeLessThan(N);
    closer.adopt(await ServiceProcess.start({ ...api.env.vars, ROLE: 'worker' })); // another worker
    await sink.waitFor((r) => ids(r).size >= N, 60_000, `all ${N} deliveries`);
    await eventually(
      async () => (await deliveryCount(api, webhookId, 'delivered')) === N,
      30_000,
      'every delivery marked delivered',
    );
    expect(ids(sink.received).size).toBe(N);
    // every attempt is recorded, those cut off by the kill too (as timeouts): no delivery was sent more often than
    // its log says, and at least one was cut off, sent or not
    const sent = new Map<string, number>();
    for (const r of sink.received) {
      const id = r.headers['webhook-id'] as string;
      sent.set(id, (sent.get(id) ?? 0) + 1);
    }
    const logged: { id: string; attempts: number; cut: number }[] = await api.db.query(
      `SELECT d.id, d.attempt_count AS attempts, count(a.*) FILTER (WHERE a.error = 'timeout')::int AS cut
         FROM webhook_deliveries d JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
        WHERE d.webhook_id = $1 GROUP BY d.id, d.attempt_count`,
      [webhookId],
    );
    expect(logged).toHaveLength(N);
    const undercounted = logged.filter((d) => (sent.get(d.id) ?? 0) > d.attempts);
    expect(undercounted).toEqual([]);
    expect(logged.reduce((n, d) => n + d.cut, 0)).toBeGreaterThan(0);
  });

  it('lets a SIGTERMed worker finish its attempts without recording any it could not send', async () => {
    const api = closer.adopt(await startService({ envVars: RETRIES, vars: { ROLE: 'api' }, receiver: true }));
    const sink = api.sink;
    // a slow subscriber keeps attempts in flight while the worker stops; a quick one keeps its jobs coming
    let slowNow = true;
    sink.responder = (r) => ({ status: 200, delayMs: slowNow && r.url === '/slow' ? 2000 : 0 });
    const slow = (await createWebhook(api.portal, { Name: 'slow', URL: sink.url('/slow'), Timeout: 5 })).ID;
    const quick = (await createWebhook(api.portal, { Name: 'quick', URL: sink.url('/quick'), Timeout: 5 })).ID;
    const N = 200;
    for (let i = 0; i < N; i++) await emitEvent(api, 'AccessRequestApproved', msg(i));
    const worker = closer.adopt(
      await ServiceProcess.start({ ...api.env.vars, ROLE: 'worker', WEBHOOK_CONCURRENCY: '8' }),
    );
    await sink.waitFor((r) => r.some((x) => x.url === '/slow'), 30_000, 'a slow attempt under way');
    await worker.close();
    slowNow = false;
    closer.adopt(await ServiceProcess.start({ ...api.env.vars, ROLE: 'worker' }));
    for (const id of [slow, quick])
      await eventually(
        async () => (await deliveryCount(api, id, 'delivered')) === N,
        60_000,
        'every delivery marked delivered',
      );
    const failed = await api.db.query(
      `SELECT a.error, count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.webhook_id = ANY($1::uuid[]) AND a.error IS NOT NULL GROUP BY a.error`,
      [[slow, quick]],
    );
    // the subscriber never failed: every attempt was a 2xx, none a send refused while stopping (a connection error)
    expect(failed).toEqual([]);
  }, 120_000);

  it('rebuilds the queues from Postgres after every Redis key under the prefix is deleted', async () => {
    const t = closer.adopt(await startService({ vars: RETRIES, receiver: true }));
    const sink = t.sink;
    const webhookId = await subscribe(t);
    // 1) deliveries pending with retries scheduled in Redis (the subscriber asks to come back later)
    let open = false;
    sink.responder = () => (open ? { status: 200 } : { status: 503, headers: { 'retry-after': '1' } });
    for (let i = 0; i < 20; i++) await emitEvent(t, 'AccessRequestApproved', msg(i));
    await sink.waitFor((r) => ids(r).size >= 20, 20_000, 'first attempts');
    // 2) deliveries created and queued but never attempted (the delivery worker paused). A full pause: it waits
    // for the jobs under way and cuts the blocking fetch, which would otherwise still take the next job to arrive.
    const worker = t.app.get(DeliveryProcessor).worker;
    await worker.pause();
    for (let i = 20; i < 30; i++) await emitEvent(t, 'AccessRequestApproved', msg(i));
    await eventually(
      async () => {
        const [row] = await t.db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE relayed_at IS NULL`);
        return row.n === 0;
      },
      10_000,
      'events relayed',
    );
    const [waiting] = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND attempt_count = 0`,
      [webhookId],
    );
    expect(waiting.n).toBe(10); // their jobs are in Redis only

    const deleted = await deleteQueueKeys(t.env.redisUrl, t.env.queuePrefix);
    expect(deleted).toBeGreaterThan(0);
    open = true;
    worker.resume();
    await eventually(
      async () => (await deliveryCount(t, webhookId, 'delivered')) === 30,
      40_000,
      'all 30 delivered after the queue was rebuilt',
    );
    const received = ids(sink.received.filter((r) => r.headers['webhook-id']));
    expect(received.size).toBe(30);
  });

  it('delivers everything once a subscriber that was down comes back', async () => {
    const t = closer.adopt(await startService({ vars: RETRIES, receiver: true }));
    const sink = t.sink;
    const port = sink.port;
    const webhookId = await subscribe(t);
    await sink.close();
    for (let i = 0; i < 25; i++) await emitEvent(t, 'AccessRequestApproved', msg(i));
    await eventually(
      async () => {
        const [row] = await t.db.query(
          `SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE error = 'connection'`,
        );
        return row.n >= 25;
      },
      20_000,
      'failed first attempts',
    );
    await sink.listen(port);
    await sink.waitFor((r) => ids(r).size >= 25, 30_000, 'all 25 after the subscriber came back');
    await eventually(
      async () => (await deliveryCount(t, webhookId, 'delivered')) === 25,
      20_000,
      'every delivery marked delivered',
    );
  });
  it("keeps running when Postgres ends a connection held out of the pool (a periodic task's lock) between statements", async () => {
    const t = closer.adopt(await startService());
    const sql = t.app.get(Sql);
    const key = 4242_9999;
    const answer = await sql.withLock(key, async () => {
      // what a Postgres restart does to every connection: "terminating connection due to administrator command"
      const [{ ended }] = await t.db.query(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND granted`,
        [key],
      );
      expect(ended).toBe(true);
      // the error reaches the idle lock connection now; unheard, it would be an unhandled 'error' event
      await new Promise((resolve) => setTimeout(resolve, 300));
      return 'done';
    });
    expect(answer).toBe('done');
    // the broken connection was closed, not given back: the pool goes on answering, and the lock is free again
    expect(await sql.query(`SELECT 1 AS one`)).toEqual([{ one: 1 }]);
    expect(await sql.withLock(key, async () => 'again')).toBe('again');
  });
});
