import { DeliveryStore } from '../../src/webhooks/delivery.store';
import { RateLimits } from '../../src/webhooks/worker/rate-limits';
import { deliveryCount, emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { createWebhook } from '../helpers/portal';
import { TestApp } from '../helpers/test-app';
import { useService } from '../helpers/use-service';

/**
 * A worker whose claim of a delivery committed but whose answer it never got (the connection failed on the way
 * back), or whose attempt failed before it was sent (Redis away when the rate limit was asked), gives the claim back.
 * Kept, the delivery stayed claimed until its lease lapsed (the webhook's timeout + 5 s), and was then recorded as an
 * attempt cut off, a `timeout` without a status code, though nothing had been sent: one step of the schedule used
 * up, and on a delivery's last allowed attempt a failure unsent.
 */
describe('a claim whose attempt was never sent', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true });

  /** The attempts of the webhook's deliveries, and how many signed requests reached its path. */
  const recorded = async (webhookId: string, path: string) => ({
    attempts: await t.db.query(
      `SELECT a.number, a.status_code, a.error FROM webhook_delivery_attempts a
         JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
      [webhookId],
    ),
    received: t.sink.received.filter((r) => r.url === path && r.headers['webhook-id']).length,
  });
  const approved = (app: TestApp) =>
    emitEvent(app, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });

  it('is given back when its answer was lost, and the delivery goes once, as its first attempt', async () => {
    const store = t.app.get(DeliveryStore);
    const claim = store.claimMany.bind(store);
    let lost = 0;
    // the claim commits, and its answer is lost with the connection
    const spy = jest.spyOn(store, 'claimMany').mockImplementation(async (keys, token) => {
      const claimed = await claim(keys, token);
      if (lost > 0 || claimed.every((c) => c === null)) return claimed;
      lost++;
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
    });
    try {
      const webhookId = (await createWebhook(t.portal, { Name: 'lost', URL: t.sink.url('/lost'), Timeout: 1 })).ID;
      await approved(t);
      // queued again by the reconciler once given back (3 s overdue); kept, cut off when its lease (6 s) lapsed
      await eventually(async () => (await deliveryCount(t, webhookId, 'delivered')) === 1, 15_000, 'delivered');
      expect(lost).toBe(1);
      expect(await recorded(webhookId, '/lost')).toEqual({
        attempts: [{ number: 1, status_code: 200, error: null }],
        received: 1,
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('is given back once Postgres answers again, the claims failed meanwhile together, and each delivery goes once', async () => {
    const store = t.app.get(DeliveryStore);
    const claim = store.claimMany.bind(store);
    const release = store.releaseClaims.bind(store);
    let away = true;
    let lost = 0;
    let tries = 0;
    const failure = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });
    const claims = jest.spyOn(store, 'claimMany').mockImplementation(async (keys, token) => {
      const claimed = await claim(keys, token);
      if (!away || claimed.every((c) => c === null)) return claimed;
      lost++;
      throw failure();
    });
    // while Postgres is away, giving them back fails too
    const releases = jest.spyOn(store, 'releaseClaims').mockImplementation(async (given) => {
      tries++;
      if (away) throw failure();
      return release(given);
    });
    try {
      const paths = ['/away-1', '/away-2', '/away-3'];
      const ids: string[] = [];
      for (const path of paths)
        ids.push((await createWebhook(t.portal, { Name: path, URL: t.sink.url(path), Timeout: 1 })).ID);
      for (let i = 0; i < 3; i++) await approved(t);
      await eventually(async () => lost >= 3 && tries >= 2, 5_000, 'claims lost and given back in vain');
      away = false;
      const triedAway = tries;
      // one statement a try gives back every claim lost meanwhile, before their leases (6 s) lapse
      for (const id of ids)
        await eventually(async () => (await deliveryCount(t, id, 'delivered')) === 3, 15_000, 'delivered');
      for (const [i, id] of ids.entries())
        expect(await recorded(id, paths[i])).toEqual({
          attempts: Array.from({ length: 3 }, () => ({ number: 1, status_code: 200, error: null })),
          received: 3,
        });
      // the claims lost while away (at least three) were given back together, in one statement once it answered
      expect(tries - triedAway).toBe(1);
    } finally {
      claims.mockRestore();
      releases.mockRestore();
    }
  });

  it('is given back when the attempt failed before it was sent, and the delivery goes once', async () => {
    const limits = t.app.get(RateLimits);
    const admit = limits.admit.bind(limits);
    let failed = 0;
    const spy = jest.spyOn(limits, 'admit').mockImplementation(async (webhookId, limit) => {
      if (failed > 0) return admit(webhookId, limit);
      failed++;
      throw new Error('Connection is closed.');
    });
    try {
      const webhook = { Name: 'limited', URL: t.sink.url('/limited'), Timeout: 1, RateLimit: 100 };
      const webhookId = (await createWebhook(t.portal, webhook)).ID;
      await approved(t);
      await eventually(async () => (await deliveryCount(t, webhookId, 'delivered')) === 1, 15_000, 'delivered');
      expect(failed).toBe(1);
      expect(await recorded(webhookId, '/limited')).toEqual({
        attempts: [{ number: 1, status_code: 200, error: null }],
        received: 1,
      });
    } finally {
      spy.mockRestore();
    }
  });
});
