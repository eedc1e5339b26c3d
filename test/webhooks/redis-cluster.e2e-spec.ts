import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { RedisConnection } from '../../src/queue/queue.module';
import { DeliveryQueue, deliveryJobId } from '../../src/webhooks/delivery.queue';
import { DeliveryProcessor } from '../../src/webhooks/worker/delivery.processor';
import { RateLimits } from '../../src/webhooks/worker/rate-limits';
import { deliveryCount, emitEvent } from '../helpers/events';
import { createWebhook, portalClient } from '../helpers/portal';
import { RedisCluster } from '../helpers/redis-cluster';
import { ServiceProcess } from '../helpers/service-process';
import { ReceivedRequest, Sink } from '../helpers/sink';
import { startTestApp } from '../helpers/test-app';
import { closeAfterEach } from '../helpers/use-fixture';
import { createTestEnv, deleteQueueKeys, TEST_SECRETS, TestEnv } from '../helpers/test-env';
import { eventually } from '../helpers/eventually';

const ids = (received: ReceivedRequest[]) => new Set(received.map((r) => r.headers['webhook-id'] as string));

describe('on a three-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let env: TestEnv;
  let sink: Sink;

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    env = await createTestEnv({
      REDIS_URL: '',
      REDIS_CLUSTER_NODES: cluster.nodes,
      WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1',
    });
    sink = await Sink.start();
  }, 60_000);
  afterAll(async () => {
    await sink?.close();
    await env?.drop();
    await cluster?.stop();
  });
  // the service processes or app of each test
  const closer = closeAfterEach();

  it('API and worker processes on the cluster: approval → a signed delivery; /health/ready checks the cluster; keys are hash-tagged', async () => {
    const api = closer.adopt(await ServiceProcess.start({ ...env.vars, ROLE: 'api' }));
    const worker = closer.adopt(await ServiceProcess.start({ ...env.vars, ROLE: 'worker' }));
    const base = `http://127.0.0.1:${api.port}`;
    const headers = { authorization: TEST_SECRETS.PORTAL_API_TOKEN, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown, method = 'POST') => {
      const res = await fetch(base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const hook = await post('/portal-api/webhooks', {
      Name: 'cluster',
      URL: sink.url('/c'),
      Events: ['AccessRequestApproved'],
    });
    expect(hook.status).toBe(201);
    const app = await post('/portal-api/apps', { Name: 'On a cluster' });
    expect(app.status).toBe(200);
    const ar = await post('/portal-api/access_requests', {
      AppID: app.body.ID,
      Catalogue: 'c',
      Plan: 'p',
      Products: ['p'],
      AuthType: 'authToken',
      DCREnabled: false,
      ProvisionImmediately: false,
      User: 'User#1',
    });
    expect(ar.status).toBe(201);
    expect((await post(`/portal-api/access_requests/${ar.body.ID}/approve`, undefined, 'PUT')).status).toBe(200);

    const [got] = await sink.waitFor((r) => r.length >= 1, 20_000, 'the approval delivery');
    expect(JSON.parse(got.body)).toMatchObject({
      Event: 'AccessRequestApproved',
      Message: { ID: ar.body.ID, Status: 'approved' },
    });
    expect(got.headers['webhook-signature']).toMatch(/^v1,/);

    for (const port of [api.port, worker.port]) {
      const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
      expect(ready.status).toBe(200);
    }
    const keys = await cluster.keys('*');
    expect(keys.length).toBeGreaterThan(0);
    // every key the service wrote sits under its hash-tagged prefix, so in one slot
    expect(keys.filter((k) => !k.startsWith(`{${env.queuePrefix}}:`))).toEqual([]);
    // Bull Board reads the delivery queue through the same Cluster connection
    const board = await fetch(`${base}/queues/api/queues`, {
      headers: { authorization: `Basic ${Buffer.from(`ops:${TEST_SECRETS.ADMIN_SECRET}`).toString('base64')}` },
    });
    expect(board.status).toBe(200);
    expect(JSON.stringify(await board.json())).toContain('deliveries');
    const metrics = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
    expect(metrics).toMatch(/webhook_queue_depth\{queue="deliveries",state="waiting"\} \d+/);
  }, 60_000);

  it('rebuilds the queue from Postgres after every queue key in the cluster is deleted', async () => {
    sink.received.length = 0;
    const t = closer.adopt(await startTestApp({ env }));
    expect(t.app.get(RedisConnection).client).toBeInstanceOf(Cluster);
    const { ID: webhookId } = await createWebhook(portalClient(t), {
      Name: 'r',
      URL: sink.url('/r'),
      Events: ['AccessRequestApproved'],
    });
    // deliveries created and queued, never attempted: the delivery worker is paused
    const worker = t.app.get(DeliveryProcessor).worker;
    await worker.pause(); // not pause(true): a blocking fetch under way would still take the next job
    for (let i = 0; i < 20; i++)
      await emitEvent(t, 'AccessRequestApproved', { ID: i, AppID: 1, UserID: 1, Status: 'approved' });
    await eventually(
      async () => {
        const [row] = await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [
          webhookId,
        ]);
        return row.n === 20;
      },
      15_000,
      'deliveries created',
    );
    // and all queued: the relay queues a batch's jobs just after its commit, and one queued after the wipe below would
    // leave a key behind, and its delivery would not need the reconciler
    const queue = t.app.get(DeliveryQueue).queue;
    const deliveryIds: string[] = (
      await t.db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1`, [webhookId])
    ).map((r: { id: string }) => r.id);
    await eventually(
      async () =>
        (await Promise.all(deliveryIds.map((id) => queue.getJobState(deliveryJobId(id, 1))))).every(
          (s) => s !== 'unknown',
        ),
      15_000,
      'the 20 jobs queued',
    );
    expect((await cluster.keys(`{${env.queuePrefix}}:deliveries:*`)).length).toBeGreaterThan(0);

    const deleted = await deleteQueueKeys(cluster.url, env.queuePrefix);
    expect(deleted).toBeGreaterThan(0);
    expect(await cluster.keys(`{${env.queuePrefix}}:*`)).toEqual([]);
    worker.resume();
    await eventually(
      async () => (await deliveryCount(t, webhookId, 'delivered')) === 20,
      40_000,
      'all 20 delivered after the queue was rebuilt by the reconciler',
    );
    expect(ids(sink.received.filter((r) => r.url === '/r')).size).toBe(20);
  }, 90_000);

  it('holds a webhook to its RateLimit with the limiter on the cluster, under the hash-tagged prefix', async () => {
    sink.received.length = 0;
    const t = closer.adopt(await startTestApp({ env }));
    const { ID: webhookId } = await createWebhook(portalClient(t), {
      Name: 'limited',
      URL: sink.url('/l'),
      Events: ['AccessRequestApproved'],
      RateLimit: 2,
    });
    const N = 8;
    for (let i = 0; i < N; i++)
      await emitEvent(t, 'AccessRequestApproved', { ID: i, AppID: 1, UserID: 1, Status: 'approved' });
    const received = await sink.waitFor(
      (r) => ids(r.filter((x) => x.url === '/l')).size >= N,
      30_000,
      `all ${N} on the limited webhook`,
    );
    const arrivals = received
      .filter((r) => r.url === '/l')
      .map((r) => r.at)
      .sort((a, b) => a - b);
    // 2 per one-second window: 8 take at least three windows after the first
    expect(arrivals[arrivals.length - 1] - arrivals[0]).toBeGreaterThanOrEqual(2_000);
    for (const start of arrivals)
      expect(arrivals.filter((at) => at >= start && at < start + 1000).length).toBeLessThanOrEqual(4);
    // recorded once each (the receiver may see the last one before its attempt is recorded)
    await eventually(
      async () => (await deliveryCount(t, webhookId, 'delivered')) === N,
      10_000,
      `all ${N} recorded as delivered`,
    );
    const [row] = await t.db.query(
      `SELECT count(*) FILTER (WHERE status = 'delivered' AND attempt_count = 1)::int AS once FROM webhook_deliveries WHERE webhook_id = $1`,
      [webhookId],
    );
    expect(row.once).toBe(N); // waiting its turn is not an attempt
    // the limiter's counter is a key of the cluster under the service's hash tag
    const probe = randomUUID();
    const limits = t.app.get(RateLimits);
    expect(await limits.admit(probe, 1)).toBe(0);
    expect(await limits.admit(probe, 1)).toBeGreaterThan(0);
    expect(await cluster.keys(`{${env.queuePrefix}}:webhook-rate:${probe}`)).toHaveLength(1);
  }, 60_000);
});
