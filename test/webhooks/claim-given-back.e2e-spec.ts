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

  const approved = (app: TestApp) =>
    emitEvent(app, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });
  const lostAnswer = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' });

  /** Claims that commit, and lose their answer with the connection, while `losing()` says so. */
  function losingClaims(losing: () => boolean): { lost: () => number; restore: () => void } {
    const store = t.app.get(DeliveryStore);
    const claim = store.claimMany.bind(store);
    let lost = 0;
    const spy = jest.spyOn(store, 'claimMany').mockImplementation(async (keys, token) => {
      const claimed = await claim(keys, token);
      if (!losing() || claimed.every((c) => c === null)) return claimed;
      lost++;
      throw lostAnswer();
    });
    return { lost: () => lost, restore: () => spy.mockRestore() };
  }

  /**
   * Waits for the webhook's `n` deliveries to be delivered, then checks that each went once, as its first attempt
   * (a claim kept instead of given back would have left a cut-off attempt first), and reached the webhook's path.
   */
  async function deliveredOnceEach(webhookId: string, path: string, n = 1): Promise<void> {
    // queued again by the reconciler once given back (3 s overdue); kept, cut off when its lease (6 s) lapsed
    await eventually(async () => (await deliveryCount(t, webhookId, 'delivered')) === n, 15_000, 'delivered');
    const attempts = await t.db.query(
      `SELECT a.number, a.status_code, a.error FROM webhook_delivery_attempts a
         JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
      [webhookId],
    );
    expect(attempts).toEqual(Array.from({ length: n }, () => ({ number: 1, status_code: 200, error: null })));
    expect(t.sink.received.filter((r) => r.url === path && r.headers['webhook-id'])).toHaveLength(n);
  }

  it('is given back when its answer was lost, and the delivery goes once, as its first attempt', async () => {
    const claims = losingClaims(() => claims.lost() === 0);
    try {
      const webhookId = (await createWebhook(t.portal, { Name: 'lost', URL: t.sink.url('/lost'), Timeout: 1 })).ID;
      await approved(t);
      await deliveredOnceEach(webhookId, '/lost');
      expect(claims.lost()).toBe(1);
    } finally {
      claims.restore();
    }
  });

  it('is given back once Postgres answers again, the claims failed meanwhile together, and each delivery goes once', async () => {
    const store = t.app.get(DeliveryStore);
    const release = store.releaseClaims.bind(store);
    let away = true;
    let tries = 0;
    const claims = losingClaims(() => away);
    // while Postgres is away, giving them back fails too
    const releases = jest.spyOn(store, 'releaseClaims').mockImplementation(async (given) => {
      tries++;
      if (away) throw lostAnswer();
      return release(given);
    });
    try {
      const paths = ['/away-1', '/away-2', '/away-3'];
      const ids: string[] = [];
      for (const path of paths)
        ids.push((await createWebhook(t.portal, { Name: path, URL: t.sink.url(path), Timeout: 1 })).ID);
      for (let i = 0; i < 3; i++) await approved(t);
      await eventually(async () => claims.lost() >= 3 && tries >= 2, 5_000, 'claims lost and given back in vain');
      away = false;
      const triedAway = tries;
      // one statement a try gives back every claim lost meanwhile, before their leases (6 s) lapse
      for (const [i, id] of ids.entries()) await deliveredOnceEach(id, paths[i], 3);
      // the claims lost while away (at least three) were given back together, in one statement once it answered
      expect(tries - triedAway).toBe(1);
    } finally {
      claims.restore();
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
      await deliveredOnceEach(webhookId, '/limited');
      expect(failed).toBe(1);
    } finally {
      spy.mockRestore();
    }
  });
});
