import { DeliveryProcessor } from '../../src/webhooks/worker/delivery.processor';
import { deliveryCount, emitEvent } from '../helpers/events';
import { createWebhook, portalClient } from '../helpers/portal';
import { ServiceProcess } from '../helpers/service-process';
import { ReceivedRequest, Sink } from '../helpers/sink';
import { startTestApp, TestApp } from '../helpers/test-app';
import { createTestEnv, deleteQueueKeys, TestEnv } from '../helpers/test-env';
import { eventually } from '../helpers/eventually';

const msg = (i: number) => ({ ID: i, AppID: 1, UserID: 1, Status: 'approved' });
const ids = (received: ReceivedRequest[]) => new Set(received.map((r) => r.headers['webhook-id'] as string));

const subscribe = async (t: TestApp, url: string, extra: Record<string, unknown> = {}): Promise<string> =>
  (await createWebhook(portalClient(t), { Name: 'r', URL: url, ...extra })).ID;

describe('no lost events', () => {
  let sink: Sink;
  beforeEach(async () => {
    sink = await Sink.start();
  });
  afterEach(() => sink.close());

  it('delivers everything when the worker is SIGKILLed mid-batch and another one starts', async () => {
    const env: TestEnv = await createTestEnv({ WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1' });
    const api = await startTestApp({ env, vars: { ROLE: 'api' } });
    let worker = await ServiceProcess.start({ ...env.vars, ROLE: 'worker', PORT: '0' });
    try {
      sink.responder = () => ({ status: 200, delayMs: 20 });
      const webhookId = await subscribe(api, sink.url(), { Timeout: 2 });
      const N = 150;
      for (let i = 0; i < N; i++) await emitEvent(api, 'AccessRequestApproved', msg(i));
      await sink.waitFor((r) => r.length >= 20, 30_000, 'the batch to be under way');
      await worker.kill('SIGKILL');
      const atKill = ids(sink.received).size;
      expect(atKill).toBeLessThan(N);
      worker = await ServiceProcess.start({ ...env.vars, ROLE: 'worker', PORT: '0' });
      await sink.waitFor((r) => ids(r).size >= N, 60_000, `all ${N} deliveries`);
      await eventually(
        async () => (await deliveryCount(api, webhookId, 'delivered')) === N,
        30_000,
        'every delivery marked delivered',
      );
      expect(ids(sink.received).size).toBe(N);
    } finally {
      await worker.kill('SIGKILL');
      await api.close();
      await env.drop();
    }
  });

  it('rebuilds the queues from Postgres after every Redis key under the prefix is deleted', async () => {
    const t = await startTestApp({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1' } });
    try {
      const webhookId = await subscribe(t, sink.url());
      // 1) deliveries pending with retries scheduled in Redis (the subscriber asks to come back later)
      let open = false;
      sink.responder = () => (open ? { status: 200 } : { status: 503, headers: { 'retry-after': '3' } });
      for (let i = 0; i < 20; i++) await emitEvent(t, 'AccessRequestApproved', msg(i));
      await sink.waitFor((r) => ids(r).size >= 20, 20_000, 'first attempts');
      // 2) deliveries created and queued but never attempted (the delivery worker paused)
      const worker = t.app.get(DeliveryProcessor).worker;
      await worker.pause(true);
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
    } finally {
      await t.close();
    }
  });

  it('delivers everything once a subscriber that was down comes back', async () => {
    const t = await startTestApp({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1' } });
    try {
      const port = sink.port;
      const webhookId = await subscribe(t, sink.url());
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
    } finally {
      await t.close();
    }
  });
});
