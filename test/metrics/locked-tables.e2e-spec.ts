import { Client } from 'pg';
import { eventually } from '../helpers/eventually';
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
    const locker = new Client({ connectionString: t.env.databaseUrl });
    const watcher = new Client({ connectionString: t.env.databaseUrl });
    await locker.connect();
    await watcher.connect();
    const waitingOnLocks = async () =>
      Number(
        (
          await watcher.query(
            `SELECT count(*) AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          )
        ).rows[0].n,
      );
    try {
      expect((await t.portal.get('/portal-api/apps')).status).toBe(200);
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${GAUGE_TABLES.join(', ')} IN ACCESS EXCLUSIVE MODE`);

      // the pool has 20 connections and a scrape reads 7 gauges: four scrapes left waiting would hold 28
      for (let scrape = 0; scrape < 4; scrape++) {
        const res = await t.http.get('/metrics');
        expect(res.status).toBe(200);
        // prom-client writes Nan, which Prometheus reads as NaN (any case)
        expect(res.text).toMatch(/^outbox_unrelayed_events NaN$/im);
        expect(res.text).toMatch(/^webhook_oldest_overdue_delivery_seconds NaN$/im);
        expect(res.text).not.toMatch(/^webhooks_disabled\{/m);
      }
      await eventually(async () => (await waitingOnLocks()) === 0, 5_000, 'no statement of the service left waiting');

      // a request that reads none of the locked tables gets a connection (and not a 500 after the pool's 10 s wait)
      expect((await t.portal.get('/portal-api/apps')).status).toBe(200);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
      await watcher.end();
    }

    // the lock gone, the gauges read again
    const after = await t.http.get('/metrics');
    expect(after.text).toMatch(/^outbox_unrelayed_events 0$/m);
    expect(after.text).toMatch(/^webhooks_disabled\{reason="manual"\} 0$/m);
  }, 60_000);
});
