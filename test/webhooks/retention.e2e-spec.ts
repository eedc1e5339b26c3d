import { randomUUID } from 'node:crypto';
import { DeliveryRetention, PARTITION_DAYS_AHEAD } from '../../src/webhooks/worker/delivery-retention';
import { OutboxRelay } from '../../src/webhooks/worker/outbox-relay';
import { useService } from '../helpers/use-service';
import { TEST_SECRETS } from '../helpers/test-env';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);
const dayName = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');

describe('delivery log retention (DELIVERY_RETENTION_DAYS=30)', () => {
  const t = useService({ vars: { DELIVERY_RETENTION_DAYS: '30' } });
  let webhookId: string;

  beforeAll(async () => {
    const res = await t.http.post(
      '/portal-api/webhooks',
      { Name: 'r', URL: 'http://127.0.0.1:9/', Events: ['AccessRequestApproved'] },
      { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
    );
    expect(res.status).toBe(201);
    webhookId = res.body.ID;
    // the log is built by hand below, an unrelayed event included: the service's own relay must not relay it
    await t.app.get(OutboxRelay).beforeApplicationShutdown();
    // as if the service had been running for 50 days: a partition for each of them, and for the days ahead (one
    // more than a pass makes, so that a pass run after midnight UTC finds them all but the one dropped below)
    await t.db.query(
      `SELECT delivery_log_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 50, (now() AT TIME ZONE 'UTC')::date + $1::int)`,
      [PARTITION_DAYS_AHEAD + 1],
    );
    // and one day ahead is missing, for the pass to make
    await t.db.query(`DROP TABLE IF EXISTS webhook_deliveries_p${dayName(daysAgo(-PARTITION_DAYS_AHEAD))}`);
  });

  /** An event and one delivery of it with one attempt, as the dispatcher leaves them. */
  async function delivery(opts: {
    occurred: Date;
    status: 'pending' | 'delivered' | 'failed';
    updated?: Date;
    relayed?: boolean;
  }): Promise<{ event: string; delivery: string }> {
    const event = randomUUID();
    const id = randomUUID();
    await t.db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at) VALUES ($1, 'AccessRequestApproved', '{}', $2, $3)`,
      [event, opts.occurred, opts.relayed === false ? null : opts.occurred],
    );
    if (opts.relayed === false) return { event, delivery: '' };
    await t.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, created_at, updated_at, event_occurred_at, next_attempt_at)
       VALUES ($1, $2, $3, 'AccessRequestApproved', $4, 1, $5, $6, $5, CASE WHEN $4 = 'pending' THEN now() + interval '1 hour' END)`,
      [id, webhookId, event, opts.status, opts.occurred, opts.updated ?? opts.occurred],
    );
    await t.db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, number, started_at, status_code, duration_ms, trigger, event_occurred_at)
       VALUES ($1, $2, 1, $3, 500, 3, 'scheduled', $3)`,
      [id, webhookId, opts.occurred],
    );
    return { event, delivery: id };
  }

  const exists = async (table: string, id: string) =>
    (await t.db.query(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).length > 0;
  const attempts = async (deliveryId: string) =>
    (
      await t.db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1`, [deliveryId])
    )[0].n;
  const partition = async (name: string) =>
    (await t.db.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [name]))[0].present;
  const day = (n: number) =>
    ['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts'].map((p) => `${p}_p${dayName(daysAgo(n))}`);
  const present = async (names: string[]) => Promise.all(names.map(partition));

  it('drops whole days past retention (events, deliveries, attempts together), never one with pending work, and says which wait', async () => {
    const oldDelivered = await delivery({ occurred: daysAgo(42), status: 'delivered' });
    const oldFailed = await delivery({ occurred: daysAgo(35), status: 'failed', updated: daysAgo(33) });
    // finished long after its event: retention counts from the event's time, so its day goes too
    const finishedLate = await delivery({ occurred: daysAgo(36), status: 'failed', updated: daysAgo(10) });
    const oldPending = await delivery({ occurred: daysAgo(40), status: 'pending' }); // e.g. redelivered by hand
    const oldUnrelayed = await delivery({ occurred: daysAgo(38), status: 'pending', relayed: false });
    const recent = await delivery({ occurred: daysAgo(2), status: 'delivered' });
    // days without partitions: their rows sit in the default partitions
    const ancient = await delivery({ occurred: daysAgo(400), status: 'delivered' });
    const ancientPending = await delivery({ occurred: daysAgo(401), status: 'pending' });
    expect(
      (
        await t.db.query(`SELECT tableoid::regclass::text AS p FROM webhook_deliveries WHERE id = $1`, [
          ancient.delivery,
        ])
      )[0].p,
    ).toBe('webhook_deliveries_default');

    const retention = t.app.get(DeliveryRetention);
    const passes = await Promise.all([retention.run(), retention.run()]);
    expect(passes.filter((p) => p === null).length).toBeGreaterThanOrEqual(1); // one process at a time
    const pass = passes.find((p) => p !== null)!;
    expect(pass.partitionsCreated).toBe(1);

    for (const gone of [oldDelivered, oldFailed, finishedLate, ancient]) {
      expect(await exists('webhook_deliveries', gone.delivery)).toBe(false);
      expect(await attempts(gone.delivery)).toBe(0);
      expect(await exists('outbox_events', gone.event)).toBe(false);
    }
    for (const kept of [oldPending, recent, ancientPending]) {
      expect(await exists('webhook_deliveries', kept.delivery)).toBe(true);
      expect(await attempts(kept.delivery)).toBe(1);
      expect(await exists('outbox_events', kept.event)).toBe(true); // a pending delivery still needs its payload
    }
    expect(await exists('outbox_events', oldUnrelayed.event)).toBe(true);
    for (const n of [42, 36, 35]) expect(await present(day(n))).toEqual([false, false, false]);
    for (const n of [40, 38, 10, 2]) expect(await present(day(n))).toEqual([true, true, true]);
    expect(pass.removed).toEqual({ webhook_deliveries: 4, webhook_delivery_attempts: 4, outbox_events: 4 });
    expect(pass.blocked).toEqual([
      { day: daysAgo(40).toISOString().slice(0, 10), pendingDeliveries: 1, unrelayedEvents: 0 },
      { day: daysAgo(38).toISOString().slice(0, 10), pendingDeliveries: 0, unrelayedEvents: 1 },
    ]);
    // the coming days are ready (here already since migration; the pass makes the ones missing)
    for (let ahead = 0; ahead <= PARTITION_DAYS_AHEAD; ahead++)
      expect(await present(day(-ahead))).toEqual([true, true, true]);

    let metrics = await t.http.get('/metrics');
    expect(metrics.text).toMatch(/webhook_retention_removed_rows_total\{table="webhook_deliveries"\} 4/);
    expect(metrics.text).toMatch(/webhook_retention_removed_rows_total\{table="webhook_delivery_attempts"\} 4/);
    expect(metrics.text).toMatch(/webhook_retention_removed_rows_total\{table="outbox_events"\} 4/);
    expect(metrics.text).toMatch(/\nwebhook_retention_blocked_days 2\n/);

    // the delivery log shows what is kept, newest first
    const log = await t.http.get(`/portal-api/webhooks/${webhookId}/deliveries?per_page=100`, {
      authorization: TEST_SECRETS.PORTAL_API_TOKEN,
    });
    expect(log.status).toBe(200);
    expect(log.body.map((d: { ID: string }) => d.ID)).toEqual([
      recent.delivery,
      oldPending.delivery,
      ancientPending.delivery,
    ]);

    // once their work is done, the waiting days go on the next pass
    await t.db.query(`UPDATE webhook_deliveries SET status = 'delivered' WHERE id = ANY($1)`, [
      [oldPending.delivery, ancientPending.delivery],
    ]);
    await t.db.query(`UPDATE outbox_events SET relayed_at = now() WHERE id = $1`, [oldUnrelayed.event]);
    const next = (await retention.run())!;
    expect(next.blocked).toEqual([]);
    expect(next.removed).toEqual({ webhook_deliveries: 2, webhook_delivery_attempts: 2, outbox_events: 3 });
    for (const n of [40, 38]) expect(await present(day(n))).toEqual([false, false, false]);
    metrics = await t.http.get('/metrics');
    expect(metrics.text).toMatch(/\nwebhook_retention_blocked_days 0\n/);

    // a third pass finds nothing more to remove
    expect((await retention.run())!.removed).toEqual({
      webhook_deliveries: 0,
      webhook_delivery_attempts: 0,
      outbox_events: 0,
    });
  });
});
