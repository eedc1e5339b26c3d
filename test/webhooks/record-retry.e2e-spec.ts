import { DeliveryStore } from '../../src/webhooks/delivery.store';
import { deliveryCount, emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { createWebhook } from '../helpers/portal';
import { useService } from '../helpers/use-service';

/**
 * A worker that has its subscriber's answer but cannot record it, because Postgres is out of reach for a moment (a
 * restart, a failover), tries again while its claim's lease lasts. Given up at once, the attempt was recorded only
 * once the lease had lapsed, as cut off (a timeout without a status code, lasting the whole lease), and the delivery
 * was sent a second time, though the subscriber had answered 200 to the first.
 */
describe('an attempt whose record fails for a moment', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true });

  it('is recorded with its answer once Postgres answers again, and not sent twice', async () => {
    const store = t.app.get(DeliveryStore);
    const record = store.recordAttempts.bind(store);
    let refused = 0;
    // what the pool answers while Postgres restarts: each record of the first three fails
    const spy = jest.spyOn(store, 'recordAttempts').mockImplementation(async (attempts) => {
      if (refused >= 3) return record(attempts);
      refused++;
      return attempts.map(() =>
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' }),
      );
    });
    try {
      const webhookId = (await createWebhook(t.portal, { Name: 'r', URL: t.sink.url(), Timeout: 5 })).ID;
      await emitEvent(t, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });
      // within the lease (timeout 5 s + 5 s), long before a cut-off could be recorded
      await eventually(async () => (await deliveryCount(t, webhookId, 'delivered')) === 1, 8_000, 'delivered');
      const attempts = await t.db.query(
        `SELECT a.number, a.status_code, a.error FROM webhook_delivery_attempts a
           JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
        [webhookId],
      );
      expect(attempts).toEqual([{ number: 1, status_code: 200, error: null }]);
      expect(refused).toBe(3);
      expect(t.sink.received.filter((r) => r.headers['webhook-id'])).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });
});
