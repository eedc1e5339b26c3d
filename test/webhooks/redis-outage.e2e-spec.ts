import Redis from 'ioredis';
import { DeliveryQueue } from '../../src/webhooks/delivery.queue';
import { DeliveryProcessor } from '../../src/webhooks/worker/delivery.processor';
import { OwnRedis } from '../helpers/own-redis';
import { createWebhook } from '../helpers/portal';
import { closeAfterEach } from '../helpers/use-fixture';
import { startService } from '../helpers/use-service';

/**
 * Postgres is the record and Redis only carries work: while Redis is unreachable a request that commits work for the
 * queue answers anyway, metrics are still scraped, and the work is delivered once Redis is back (empty).
 */
describe('while Redis is down', () => {
  const closer = closeAfterEach();

  it('answers a test send and a redelivery, serves /metrics, and delivers both once Redis is back', async () => {
    const redis = await OwnRedis.start();
    closer.adopt({ close: () => redis.down() });
    const t = closer.adopt(
      await startService({ envVars: { REDIS_URL: redis.url, WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true }),
    );
    const w = await createWebhook(t.portal, { Name: 'outage', URL: t.sink.url('/o') });
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`)).status).toBe(202);
    await t.sink.waitFor((r) => r.length >= 1, 20_000, 'the test send before the outage');
    const [delivery] = (await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries`)).body;

    await redis.down();
    const sent = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'during the outage' });
    expect(sent.status).toBe(202);
    const again = await t.portal.post(`/portal-api/webhooks/${w.ID}/deliveries/${delivery.ID}/redeliver`);
    expect(again.status).toBe(200);
    const metrics = await t.http.get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('outbox_unrelayed_events');

    await redis.up();
    await t.sink.waitFor((r) => r.length >= 3, 60_000, 'the test send and the redelivery after the outage');
    expect(t.sink.received.filter((r) => r.body.includes('during the outage'))).toHaveLength(1);
  });

  it('reconnects every queue connection within 2 s of Redis coming back, however long it was away', async () => {
    const t = closer.adopt(await startService());
    const worker = t.app.get(DeliveryProcessor).worker;
    // the worker's own connection, its blocking one (private in BullMQ's types), and the queue's
    const blocking = (worker as unknown as { blockingConnection: { client: Promise<unknown> } }).blockingConnection;
    const clients = [
      await worker.client,
      await blocking.client,
      await t.app.get(DeliveryQueue).queue.client,
    ] as Redis[];
    // BullMQ's own delay, e^tries ms capped at 20 s, reached 20 s after about 15 s of outage: a worker then took no
    // job for up to 20 s after Redis was back (18-20 s measured from outside)
    for (const client of clients)
      expect([1, 10, 15, 100].map((tries) => client.options.retryStrategy!(tries))).toEqual([100, 1000, 1500, 2000]);
  });
});
