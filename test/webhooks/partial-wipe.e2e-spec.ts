import IORedis from 'ioredis';
import { hashTaggedPrefix, redisOptionsFromUrl } from '../../src/queue/redis-connection';
import { DeliveryQueue } from '../../src/webhooks/delivery.queue';
import { deliveryCount, emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

// Keys deleted while the queue runs (a wipe racing the workers) can leave half a job behind: its data
// without its place in a list, or its id in a list without its data. Re-adding the same job id is then a
// no-op, so the reconciler must queue such a delivery under a fresh id.
describe('the reconciler and half-deleted jobs', () => {
  const t = useService({ receiver: true });
  let redis: IORedis;

  beforeAll(() => {
    redis = new IORedis(redisOptionsFromUrl(t.env.redisUrl));
  });
  afterAll(() => redis.disconnect());

  it('delivers a delivery whose job data survived while its list entry did not, and one whose list entry survived without data', async () => {
    const w = await t.webhook();
    // a paused queue keeps the jobs where the relay put them
    const queue = t.app.get(DeliveryQueue).queue;
    await queue.pause();
    for (let i = 0; i < 2; i++)
      await emitEvent(t, 'AccessRequestApproved', { ID: i, AppID: 1, UserID: 1, Status: 'approved' });
    const rows: { id: string }[] = await eventually(
      async () => {
        const r = await t.db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at`, [
          w.ID,
        ]);
        return r.length === 2 ? r : null;
      },
      10_000,
      'two deliveries',
    );
    const prefix = `${hashTaggedPrefix(t.env.queuePrefix)}:deliveries`;
    const [orphanData, orphanEntry] = rows.map((r) => `${r.id}-1`);
    await eventually(
      async () => (await redis.exists(`${prefix}:${orphanData}`, `${prefix}:${orphanEntry}`)) === 2,
      10_000,
      'both jobs queued',
    );
    // the first keeps its data but leaves its list; the second stays listed but loses its data
    const list = (await redis.lpos(`${prefix}:wait`, orphanData)) !== null ? 'wait' : 'paused';
    expect(await redis.lrem(`${prefix}:${list}`, 0, orphanData)).toBe(1);
    expect(await redis.del(`${prefix}:${orphanEntry}`)).toBe(1);
    await queue.resume();
    await eventually(
      async () => (await deliveryCount(t, w.ID, 'delivered')) === 2,
      30_000,
      'both delivered through fresh jobs',
    );
    expect(new Set(t.sink.received.map((r) => r.headers['webhook-id'])).size).toBe(2);
  }, 60_000);
});
