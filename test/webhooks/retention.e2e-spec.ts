import { randomUUID } from 'node:crypto';
import { DeliveryRetention, PARTITION_DAYS_AHEAD } from '../../src/webhooks/worker/delivery-retention';
import { startTestApp, TestApp } from '../helpers/test-app';
import { TEST_SECRETS } from '../helpers/test-env';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);
const dayName = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');

describe('delivery log retention (DELIVERY_RETENTION_DAYS=30)', () => {
  let t: TestApp;
  let webhookId: string;

  beforeAll(async () => {
    t = await startTestApp({ vars: { DELIVERY_RETENTION_DAYS: '30' } });
    const res = await t.http.post(
      '/portal-api/webhooks',
      { Name: 'r', URL: 'http://127.0.0.1:9/', Events: ['AccessRequestApproved'] },
      { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
    );
    expect(res.status).toBe(201);
    webhookId = res.body.ID;
    // as if the service had been running for 50 days: a partition for each of them
    await t.db.query(
      `SELECT delivery_log_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 50, (now() AT TIME ZONE 'UTC')::date)`,
    );
    // and one day ahead is missing, for the pass to make
    await t.db.query(`DROP TABLE IF EXISTS webhook_deliveries_p${dayName(daysAgo(-PARTITION_DAYS_AHEAD))}`);
  });
  afterAll(() => t.close());

  /** An event and one delivery of it with one attempt, as the dispatcher leaves them. */
  async function delivery(opts: {
    occurred: Date;
    status: 'pending' | 'delivered' | 'failed';
    finished?: Date;
    relayed?: boolean;
  }): Promise<{ event: string; delivery: string }> {
    const event = randomUUID();
    const id = randomUUID();
    const finished = opts.status === 'pending' ? 'infinity' : (opts.finished ?? opts.occurred).toISOString();
    await t.db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at) VALUES ($1, 'AccessRequestApproved', '{}', $2, $3)`,
      [event, opts.occurred, opts.relayed === false ? null : opts.occurred],
    );
    if (opts.relayed === false) return { event, delivery: '' };
    await t.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, created_at, updated_at, finished_at, next_attempt_at)
       VALUES ($1, $2, $3, 'AccessRequestApproved', $4, 1, $5, $5, $6, CASE WHEN $4 = 'pending' THEN now() + interval '1 hour' END)`,
      [id, webhookId, event, opts.status, opts.occurred, finished],
    );
    await t.db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, status_code, duration_ms, trigger, delivery_finished_at)
       VALUES ($1, 1, $2, 500, 3, 'scheduled', $3)`,
      [id, opts.occurred, finished],
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

  it('drops past days of delivered and failed deliveries with their attempts and relayed events; never pending work; counts what it removed', async () => {
    const oldDelivered = await delivery({ occurred: daysAgo(42), status: 'delivered' });
    const oldFailed = await delivery({ occurred: daysAgo(35), status: 'failed', finished: daysAgo(33) });
    const oldPending = await delivery({ occurred: daysAgo(40), status: 'pending' }); // e.g. redelivered by hand
    const oldUnrelayed = await delivery({ occurred: daysAgo(40), status: 'pending', relayed: false });
    // kept: finished 10 days ago (its event, 38 days old, goes: the log does not need it)
    const finishedLate = await delivery({ occurred: daysAgo(38), status: 'failed', finished: daysAgo(10) });
    const recent = await delivery({ occurred: daysAgo(2), status: 'delivered' });
    const ancient = await delivery({ occurred: daysAgo(400), status: 'delivered' }); // a day without partition: the default one
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

    for (const gone of [oldDelivered, oldFailed, ancient]) {
      expect(await exists('webhook_deliveries', gone.delivery)).toBe(false);
      expect(await attempts(gone.delivery)).toBe(0);
      expect(await exists('outbox_events', gone.event)).toBe(false);
    }
    for (const kept of [oldPending, finishedLate, recent]) {
      expect(await exists('webhook_deliveries', kept.delivery)).toBe(true);
      expect(await attempts(kept.delivery)).toBe(1);
    }
    expect(await exists('outbox_events', oldPending.event)).toBe(true); // a pending delivery still needs its payload
    expect(await exists('outbox_events', recent.event)).toBe(true);
    expect(await exists('outbox_events', finishedLate.event)).toBe(false);
    expect(await exists('outbox_events', oldUnrelayed.event)).toBe(true);

    expect(await partition(`webhook_deliveries_p${dayName(daysAgo(40))}`)).toBe(false);
    expect(await partition(`webhook_delivery_attempts_p${dayName(daysAgo(40))}`)).toBe(false);
    expect(await partition(`webhook_deliveries_p${dayName(daysAgo(10))}`)).toBe(true);
    // the day of the unrelayed event and of the pending delivery's event stays; the day of the other old events goes
    expect(await partition(`outbox_events_p${dayName(daysAgo(40))}`)).toBe(true);
    expect(await partition(`outbox_events_p${dayName(daysAgo(35))}`)).toBe(false);
    expect(pass.removed).toEqual({ webhook_deliveries: 3, webhook_delivery_attempts: 3, outbox_events: 4 });
    // the coming days are ready (here already since migration; the pass makes the ones missing)
    for (let ahead = 0; ahead <= PARTITION_DAYS_AHEAD; ahead++)
      expect(await partition(`webhook_deliveries_p${dayName(daysAgo(-ahead))}`)).toBe(true);

    const metrics = await t.http.get('/metrics');
    expect(metrics.text).toMatch(/webhook_retention_removed_rows_total\{table="webhook_deliveries"\} 3/);
    expect(metrics.text).toMatch(/webhook_retention_removed_rows_total\{table="webhook_delivery_attempts"\} 3/);
    expect(metrics.text).toMatch(/webhook_retention_removed_rows_total\{table="outbox_events"\} 4/);

    // the delivery log shows what is kept, newest first, and a kept delivery with its attempt
    const log = await t.http.get(`/portal-api/webhooks/${webhookId}/deliveries?per_page=100`, {
      authorization: TEST_SECRETS.PORTAL_API_TOKEN,
    });
    expect(log.status).toBe(200);
    expect(log.body.map((d: { ID: string }) => d.ID)).toEqual([
      recent.delivery,
      finishedLate.delivery,
      oldPending.delivery,
    ]);
    const one = await t.http.get(`/portal-api/webhooks/${webhookId}/deliveries/${finishedLate.delivery}`, {
      authorization: TEST_SECRETS.PORTAL_API_TOKEN,
    });
    expect(one.body.Attempts).toHaveLength(1);

    // a second pass finds nothing more to remove
    expect((await retention.run())!.removed).toEqual({
      webhook_deliveries: 0,
      webhook_delivery_attempts: 0,
      outbox_events: 0,
    });

    // redelivered by hand after its event went: it fails at once, without an attempt, instead of staying pending
    const again = await t.http.post(
      `/portal-api/webhooks/${webhookId}/deliveries/${finishedLate.delivery}/redeliver`,
      {},
      { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
    );
    expect(again.status).toBe(200);
    const deadline = Date.now() + 15_000;
    let status = 'pending';
    while (status === 'pending' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await t.db.query(`SELECT status FROM webhook_deliveries WHERE id = $1`, [finishedLate.delivery]))[0]
        .status;
    }
    expect(status).toBe('failed');
    expect(await attempts(finishedLate.delivery)).toBe(1);
  });
});
