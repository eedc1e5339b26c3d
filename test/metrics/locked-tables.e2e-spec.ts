import { eventually } from '../helpers/eventually';
import { lockTables } from '../helpers/locks';
import { useService } from '../helpers/use-service';

/** The tables every gauge read from Postgres reads. */
const GAUGE_TABLES = ['webhook_deliveries', 'outbox_events', 'webhooks'];

/**
 * A gauge read from Postgres that has no answer within the scrape's deadline (1 s) reads NaN; its statement must
 * end there too, in Postgres. Behind a lock (a partition dropped or added, a migration, a VACUUM FULL by hand) each
 * scrape otherwise left its seven statements waiting, each on a connection of the pool, and a few scrapes took the
 * whole pool from the users' requests.
 */
describe('/metrics while the tables its gauges read are locked', () => {
  const t = useService({ vars: { ROLE: 'api' } });

  it('ends its statements in Postgres with the scrape, and leaves the pool to the users', async () => {
    expect((await t.portal.get('/portal-api/apps')).status).toBe(200);
    const lock = await lockTables(t.env.databaseUrl, GAUGE_TABLES);
    try {
      // the pool has 20 connections and a scrape reads 7 gauges: four scrapes left waiting would hold 28
      for (let scrape = 0; scrape < 4; scrape++) {
        const res = await t.http.get('/metrics');
        expect(res.status).toBe(200);
        // prom-client writes Nan, which Prometheus reads as NaN (any case)
        expect(res.text).toMatch(/^outbox_unrelayed_events NaN$/im);
        expect(res.text).toMatch(/^webhook_oldest_overdue_delivery_seconds NaN$/im);
        expect(res.text).not.toMatch(/^webhooks_disabled\{/m);
      }
      await eventually(async () => (await lock.waiting()) === 0, 5_000, 'no statement of the service left waiting');

      // a request that reads none of the locked tables gets a connection (and not a 503 after the pool's 10 s wait)
      expect((await t.portal.get('/portal-api/apps')).status).toBe(200);
    } finally {
      await lock.release();
    }

    // the lock gone, the gauges read again
    const after = await t.http.get('/metrics');
    expect(after.text).toMatch(/^outbox_unrelayed_events 0$/m);
    expect(after.text).toMatch(/^webhooks_disabled\{reason="manual"\} 0$/m);
  }, 60_000);
});
