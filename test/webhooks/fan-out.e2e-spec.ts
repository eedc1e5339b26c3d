import { DeliveryQueue, ENQUEUE_CHUNK } from '../../src/webhooks/delivery.queue';
import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

describe('fan-out of one event to more webhooks than one addBulk queues', () => {
  const t = useService({ receiver: true });

  it('queues the deliveries in chunks, in order, and delivers every one exactly once', async () => {
    const count = 2 * ENQUEUE_CHUNK + 30;
    const hooks: { ID: string; path: string }[] = [];
    for (let i = 0; i < count; i += 25) {
      hooks.push(...(await Promise.all(Array.from({ length: Math.min(25, count - i) }, () => t.webhook()))));
    }
    const ours = new Set(hooks.map((h) => h.ID));
    const queue = t.app.get(DeliveryQueue).queue;
    const original = queue.addBulk.bind(queue);
    // how many of the relay's addBulk calls for these webhooks were under way at once
    let inFlight = 0;
    let mostInFlight = 0;
    // the relay's calls: on a loaded machine the reconciler may re-queue a few deliveries whose jobs a worker has
    // taken but not yet claimed in Postgres (3 s after they were due), which that claim makes harmless
    const relayCalls: Parameters<typeof queue.addBulk>[0][] = [];
    const addBulk = jest.spyOn(queue, 'addBulk').mockImplementation(async (jobs) => {
      const relays = !new Error().stack?.includes('requeueOverdue');
      if (relays) relayCalls.push(jobs);
      const mine = relays && jobs.some((j) => ours.has(j.data.webhookId));
      if (mine) mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await original(jobs);
      } finally {
        if (mine) inFlight--;
      }
    });
    try {
      await emitEvent(t, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });
      await eventually(async () => t.sink.received.length >= count, 30_000, `all ${count} deliveries received`);
      const rows: { n: number; attempts: number }[] = await eventually(
        async () => {
          const r = await t.db.query(
            `SELECT count(*)::int AS n, sum(attempt_count)::int AS attempts FROM webhook_deliveries WHERE status = 'delivered'`,
          );
          return r[0].n === count ? r : null;
        },
        10_000,
        'every delivery recorded as delivered',
      );
      expect(rows[0]).toEqual({ n: count, attempts: count });

      // the relay's jobs went in chunks, one after the other, each job once
      const chunks = relayCalls
        .map((jobs) => jobs.filter((j) => ours.has(j.data.webhookId)))
        .filter((jobs) => jobs.length > 0);
      expect(chunks.map((jobs) => jobs.length)).toEqual([ENQUEUE_CHUNK, ENQUEUE_CHUNK, 30]);
      const jobIds = chunks.flat().map((j) => j.opts?.jobId);
      expect(new Set(jobIds).size).toBe(count);
      expect(mostInFlight).toBe(1);
    } finally {
      addBulk.mockRestore();
    }

    // one request per webhook, each with its own message id
    const byPath = new Map<string, number>();
    for (const r of t.sink.received) byPath.set(r.url, (byPath.get(r.url) ?? 0) + 1);
    expect(hooks.every((h) => byPath.get(h.path) === 1)).toBe(true);
    expect(new Set(t.sink.received.map((r) => r.headers['webhook-id'])).size).toBe(count);
  }, 90_000);
});
