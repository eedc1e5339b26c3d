import { emitEvent } from '../helpers/events';
import { Sink } from '../helpers/sink';
import { startTestApp, TestApp } from '../helpers/test-app';
import { TEST_SECRETS } from '../helpers/test-env';

describe('a slow subscriber does not hold up the others', () => {
  let t: TestApp;
  let slow: Sink;
  let fast: Sink;

  beforeAll(async () => {
    // 8 delivery slots in this worker: one webhook may hold at most 2 of them
    t = await startTestApp({ vars: { WEBHOOK_CONCURRENCY: '8', WEBHOOK_RETRY_SCHEDULE: '0' } });
    slow = await Sink.start();
    fast = await Sink.start();
  });
  afterAll(async () => {
    await slow.close();
    await fast.close();
    await t.close();
  });

  it('delivers every event to the fast subscriber while the slow one hangs until its timeout', async () => {
    const api = t.http.with({ authorization: TEST_SECRETS.PORTAL_API_TOKEN });
    slow.responder = () => ({ hang: true });
    await api.post('/portal-api/webhooks', {
      Name: 'slow',
      URL: slow.url(),
      Timeout: 5,
      Events: ['AccessRequestCreated'],
    });
    await api.post('/portal-api/webhooks', {
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
