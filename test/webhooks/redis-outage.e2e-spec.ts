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

  it('takes jobs again within seconds of Redis coming back after a long outage', async () => {
    const redis = await OwnRedis.start();
    closer.adopt({ close: () => redis.down() });
    const t = closer.adopt(
      await startService({ envVars: { REDIS_URL: redis.url, WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true }),
    );
    const w = await createWebhook(t.portal, { Name: 'long outage', URL: t.sink.url('/o') });
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`)).status).toBe(202);
    await t.sink.waitFor((r) => r.length >= 1, 20_000, 'the test send before the outage');

    await redis.down();
    // long enough for BullMQ's own reconnect delay (e^tries ms, capped at 20 s) to have grown to 20 s
    await new Promise((resolve) => setTimeout(resolve, 25_000));
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'during the outage' })).status).toBe(202);
    await redis.up();
    const back = Date.now();
    await t.sink.waitFor((r) => r.length >= 2, 40_000, 'the test send after the outage');
    // reconnected within 2 s, queued by the reconciler within its grace (3 s) and interval (2 s), then taken
    expect(Date.now() - back).toBeLessThan(10_000);
  }, 90_000);
});
