import { BUSY_RETRY_AFTER_SECONDS } from '../src/common/errors';
import { eventually } from './helpers/eventually';
import { lockTables } from './helpers/locks';
import { useService } from './helpers/use-service';

/** The connections of the service's pool (src/database/data-source.ts). */
const POOL_SIZE = 20;

/**
 * A request that finds every database connection taken for the pool's whole wait (10 s) is the service's overload,
 * not a fault: a 503 in the family's body with Retry-After, which clients and proxies retry; and the requests that
 * held the connections still complete.
 */
describe('a request that gets no database connection in time', () => {
  const t = useService({ vars: { ROLE: 'api' } });

  it('is answered 503 with Retry-After in its family body, and the requests ahead of it complete', async () => {
    let held: Promise<number[]> | undefined;
    const lock = await lockTables(t.env.databaseUrl, ['portal_apps']);
    try {
      // every connection of the pool waits for the lock, under a request each
      held = Promise.all(
        Array.from({ length: POOL_SIZE }, async () => (await t.portal.get('/portal-api/apps')).status),
      );
      await eventually(
        async () => (await lock.waiting()) === POOL_SIZE,
        10_000,
        'every connection of the pool to wait for the lock',
      );

      // a portal route, and a dashboard route whose credential is looked up in the database
      const [portal, dashboard] = await Promise.all([
        t.portal.get('/portal-api/webhooks'),
        t.http.get('/api/apis', { authorization: 'Bearer 0123456789abcdef0123456789abcdef' }),
      ]);
      const message = `the service is busy: no database connection came free in time; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`;
      expect(dashboard.status).toBe(503);
      expect(dashboard.headers['retry-after']).toBe(String(BUSY_RETRY_AFTER_SECONDS));
      expect(dashboard.body).toEqual({ Status: 'Error', Message: message, Meta: null });
      expect(portal.status).toBe(503);
      expect(portal.headers['retry-after']).toBe(String(BUSY_RETRY_AFTER_SECONDS));
      expect(portal.body).toEqual({ status: 'error', errors: [message] });
    } finally {
      await lock.release();
    }
    expect(await held).toEqual(Array.from({ length: POOL_SIZE }, () => 200));
    expect((await t.portal.get('/portal-api/webhooks')).status).toBe(200);
  }, 60_000);
});
