import { emitEvent } from '../helpers/events';
import { Sink } from '../helpers/sink';
import { useService } from '../helpers/use-service';

describe('a slow subscriber does not hold up the others', () => {
  // 8 delivery slots in this worker: one webhook may hold at most 2 of them
  const t = useService({ vars: { WEBHOOK_CONCURRENCY: '8', WEBHOOK_RETRY_SCHEDULE: '0' }, receiver: true });
  let fast: Sink;
  beforeAll(async () => {
    fast = t.adopt(await Sink.start());
  });

  it('delivers every event to the fast subscriber while the slow one hangs until its timeout', async () => {
    const slow = t.sink;
    slow.responder = () => ({ hang: true });
    await t.portal.post('/portal-api/webhooks', {
      Name: 'slow',
      URL: slow.url(),
      Timeout: 5,
      Events: ['AccessRequestCreated'],
    });
    await t.portal.post('/portal-api/webhooks', {
      Name: 'fast',
      URL: fast.url(),
      Timeout: 5,
      Events: ['AccessRequestCreated'],
    });
    const N = 24;
    for (let i = 0; i < N; i++) await emitEvent(t, 'AccessRequestCreated', { ID: i });

    await fast.waitForCount(N, 20_000);
    // every fast delivery was done before the slow subscriber's first attempt had even timed out
    const [row] = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        JOIN webhooks w ON w.id = d.webhook_id WHERE w.name = 'slow'`,
    );
    expect(row.n).toBe(0);
    // and the slow one held at most its share of slots
    expect(slow.received.length).toBeLessThanOrEqual(2);
  });
});

describe('several dead subscribers do not hold up the others', () => {
  // 8 delivery slots: each webhook may hold 2, so four dead subscribers could hold them all
  const t = useService({ vars: { WEBHOOK_CONCURRENCY: '8', WEBHOOK_RETRY_SCHEDULE: '0' }, receiver: true });
  let fast: Sink;
  beforeAll(async () => {
    fast = t.adopt(await Sink.start());
  });

  it('keeps half of the slots for subscribers that answer, while four others hang until their timeout', async () => {
    const dead = t.sink;
    dead.responder = () => ({ hang: true });
    for (let i = 0; i < 4; i++)
      await t.portal.post('/portal-api/webhooks', {
        Name: `dead${i}`,
        URL: dead.url(`/dead${i}`),
        Timeout: 8,
        Events: ['AccessRequestCreated'],
      });
    await t.portal.post('/portal-api/webhooks', {
      Name: 'fast',
      URL: fast.url(),
      Timeout: 8,
      Events: ['AccessRequestCreated'],
    });
    const N = 24;
    for (let i = 0; i < N; i++) await emitEvent(t, 'AccessRequestCreated', { ID: i });

    await fast.waitForCount(N, 30_000);
    // every fast delivery was done before any dead subscriber's attempt had timed out
    const [row] = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        JOIN webhooks w ON w.id = d.webhook_id WHERE w.name LIKE 'dead%'`,
    );
    expect(row.n).toBe(0);
    // and they held at most half of the slots between them
    expect(dead.received.length).toBeLessThanOrEqual(4);
  });
});
