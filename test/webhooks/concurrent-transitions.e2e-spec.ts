import { WEBHOOK_EVENTS } from '../../src/events/event-names';
import { DeliveryQueue } from '../../src/webhooks/delivery.queue';
import { DeliveryStore, keyText } from '../../src/webhooks/delivery.store';
import { webhookRows } from '../helpers/events';
import { DeliveryRetention } from '../../src/webhooks/worker/delivery-retention';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

/**
 * Every transition of a delivery and its webhook at once, on the same rows: many redeliveries by hand,
 * recoveries, switching the webhook off and on, the worker's claims and records, retention passes, and deleting
 * the webhook. None may answer 5xx, and the log must stay whole: each attempt number recorded once, none lost,
 * and each delivery ends delivered, failed or pending with work queued for it.
 */
describe('concurrent transitions of the same delivery and webhook', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true });
  let n = 0;
  const answers: { call: string; status: number; body: unknown }[] = [];

  beforeAll(() => {
    // every third request fails, so deliveries end both delivered and failed
    t.sink.responder = (_r, i) => (i % 3 === 2 ? { status: 500, body: 'busy' } : { status: 200, body: 'ok' });
  });
  beforeEach(() => {
    answers.length = 0;
  });

  async function webhook(): Promise<string> {
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: `c${++n}`,
      URL: t.sink.url(`/c${n}`),
      Events: [...WEBHOOK_EVENTS],
    });
    expect(res.status).toBe(201);
    return res.body.ID;
  }

  /** A call whose answer is kept: any 5xx fails the spec at the end, with what it said. */
  async function call(name: string, fn: () => Promise<{ status: number; body: unknown }>): Promise<number> {
    const res = await fn();
    answers.push({ call: name, status: res.status, body: res.body });
    return res.status;
  }

  const delivery = async (w: string, d: string) =>
    (await t.portal.get(`/portal-api/webhooks/${w}/deliveries/${d}`)).body;

  /** Sent, retried and settled: no longer pending. */
  const settled = (w: string, d: string) =>
    eventually(
      async () => {
        const got = await delivery(w, d);
        return got.Status !== 'pending' ? got : null;
      },
      30_000,
      `delivery ${d} to settle`,
    );

  async function testSend(w: string): Promise<string> {
    const res = await t.portal.post(`/portal-api/webhooks/${w}/test`, {});
    expect(res.status).toBe(202);
    return res.body.DeliveryID;
  }

  /** Every attempt of the delivery recorded once, numbered 1..attempt_count with none missing. */
  async function wholeLog(deliveryId: string): Promise<void> {
    const [d] = await t.db.query(`SELECT attempt_count FROM webhook_deliveries WHERE id = $1`, [deliveryId]);
    const numbers = (
      await t.db.query(`SELECT number FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY number`, [
        deliveryId,
      ])
    ).map((r: { number: number }) => r.number);
    expect({ deliveryId, numbers }).toEqual({
      deliveryId,
      numbers: Array.from({ length: d.attempt_count }, (_, i) => i + 1),
    });
  }

  const manualAttempts = async (deliveryId: string): Promise<number> =>
    (
      await t.db.query(
        `SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1 AND trigger = 'manual'`,
        [deliveryId],
      )
    )[0].n;

  const no5xx = () =>
    expect(answers.filter((a) => a.status >= 500)).toEqual([]); /* each listed with its answer when it fails */

  it('redeliveries, recoveries, switching off and on, worker attempts and retention on one delivery: no 5xx, each attempt once', async () => {
    const w = await webhook();
    const d = await testSend(w);
    await settled(w, d);
    const retention = t.app.get(DeliveryRetention);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    for (let round = 0; round < 6; round++) {
      const calls: (() => Promise<unknown>)[] = [];
      for (let i = 0; i < 16; i++)
        calls.push(() =>
          call('redeliver', () => t.portal.post(`/portal-api/webhooks/${w}/deliveries/${d}/redeliver`, {})),
        );
      for (let i = 0; i < 4; i++)
        calls.push(() => call('recover', () => t.portal.post(`/portal-api/webhooks/${w}/recover`, { since })));
      calls.push(() => call('get', () => t.portal.get(`/portal-api/webhooks/${w}/deliveries/${d}`)));
      if (round % 2 === 1) {
        calls.push(() => call('switch off', () => t.portal.put(`/portal-api/webhooks/${w}`, { Active: false })));
        calls.push(() => call('switch on', () => t.portal.put(`/portal-api/webhooks/${w}`, { Active: true })));
      }
      calls.push(() => retention.run());
      const answersBefore = answers.length;
      const manualBefore = await manualAttempts(d);
      await Promise.all(calls.map((c) => c()));
      const round_ = answers.slice(answersBefore);
      expect(round_.filter((a) => a.status >= 500)).toEqual([]);
      // each redelivery or recovery that was accepted is one manual attempt (unless the webhook was off by then),
      // and every other one was refused for the delivery being pending (or the webhook off)
      const accepted =
        round_.filter((a) => a.call === 'redeliver' && a.status === 200).length +
        round_
          .filter((a) => a.call === 'recover' && a.status === 200)
          .reduce((sum, a) => sum + (a.body as { Requeued: number }).Requeued, 0);
      expect(accepted).toBeGreaterThanOrEqual(1);
      expect(round_.filter((a) => a.call === 'redeliver' && a.status !== 200).every((a) => a.status === 409)).toBe(
        true,
      );
      await t.portal.put(`/portal-api/webhooks/${w}`, { Active: true });
      const after = await delivery(w, d);
      if (after.Status === 'pending') {
        // a redelivery caught by a switch-off fails without an attempt; otherwise it is sent
        await settled(w, d);
      }
      await wholeLog(d);
      const made = (await manualAttempts(d)) - manualBefore;
      if (round % 2 === 0) expect(made).toBe(accepted);
      else expect(made).toBeLessThanOrEqual(accepted);
    }
    no5xx();
  });

  it('deleting a webhook while its deliveries are redelivered, recovered and attempted: no 5xx, nothing left behind', async () => {
    const w = await webhook();
    const ds = [await testSend(w), await testSend(w), await testSend(w)];
    for (const d of ds) await settled(w, d);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const calls: (() => Promise<unknown>)[] = [];
    for (const d of ds)
      for (let i = 0; i < 8; i++)
        calls.push(() =>
          call('redeliver', () => t.portal.post(`/portal-api/webhooks/${w}/deliveries/${d}/redeliver`, {})),
        );
    calls.push(() => call('recover', () => t.portal.post(`/portal-api/webhooks/${w}/recover`, { since })));
    calls.push(() => call('switch off', () => t.portal.put(`/portal-api/webhooks/${w}`, { Active: false })));
    for (let i = 0; i < 3; i++) calls.push(() => call('delete', () => t.portal.delete(`/portal-api/webhooks/${w}`)));
    calls.push(() => call('test send', () => t.portal.post(`/portal-api/webhooks/${w}/test`, {})));
    await Promise.all(calls.map((c) => c()));
    no5xx();
    expect(answers.filter((a) => a.call === 'delete' && a.status === 200)).toHaveLength(1);
    expect((await t.portal.get(`/portal-api/webhooks/${w}`)).status).toBe(404);
    // its history goes with the workers' purge
    await eventually(
      async () => Object.values(await webhookRows(t.db, w)).every((n) => n === 0) || null,
      30_000,
      'the purge of the deleted webhook',
    );
  });

  it('a finished delivery redelivered by many callers at once is sent once more, exactly once', async () => {
    const w = await webhook();
    t.sink.responder = () => ({ status: 200, body: 'ok' });
    const d = await testSend(w);
    const first = await settled(w, d);
    // the redelivery's attempt stays in flight while the calls are answered, however slowly a loaded machine
    // answers them: a call after it finished would rightly redeliver once more
    t.sink.responder = () => ({ status: 200, body: 'ok', delayMs: 5000 });
    const statuses = await Promise.all(
      Array.from({ length: 32 }, () =>
        call('redeliver', () => t.portal.post(`/portal-api/webhooks/${w}/deliveries/${d}/redeliver`, {})),
      ),
    );
    no5xx();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(31);
    const again = await settled(w, d);
    expect(again).toMatchObject({ Status: 'delivered', AttemptCount: first.AttemptCount + 1 });
    await wholeLog(d);
  });

  it('an attempt cut off with its worker, found by many claimers, redeliveries and the reconciler at once, is recorded once', async () => {
    const w = await webhook();
    t.sink.responder = () => ({ status: 200, body: 'ok' });
    const d = await testSend(w);
    await settled(w, d);
    const store = t.app.get(DeliveryStore);
    // as a worker killed mid-attempt leaves it: pending, claimed, the claim's lease run out, overdue for the reconciler
    await t.db.query(
      `UPDATE webhook_deliveries SET status = 'pending', locked_until = now() - interval '1 second',
              next_attempt_at = now() - interval '1 minute', next_trigger = 'scheduled' WHERE id = $1`,
      [d],
    );
    const [{ at }] = await t.db.query(
      `SELECT ${keyText('event_occurred_at')} AS at
         FROM webhook_deliveries WHERE id = $1`,
      [d],
    );
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 16; i++) calls.push(store.recordCutOff([{ id: d, at }], 2));
    for (let i = 0; i < 8; i++)
      calls.push(call('redeliver', () => t.portal.post(`/portal-api/webhooks/${w}/deliveries/${d}/redeliver`, {})));
    calls.push(
      call('recover', () =>
        t.portal.post(`/portal-api/webhooks/${w}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() }),
      ),
    );
    const cut = (await Promise.all(calls)).slice(0, 16).flat();
    no5xx();
    await settled(w, d);
    await wholeLog(d);
    const timeouts = await t.db.query(
      `SELECT number FROM webhook_delivery_attempts WHERE delivery_id = $1 AND error = 'timeout' AND status_code IS NULL`,
      [d],
    );
    // the cut-off attempt: recorded by one of the callers here, or by the worker the reconciler woke, never twice
    expect(timeouts).toEqual([{ number: 2 }]);
    expect(cut.length).toBeLessThanOrEqual(1);
  });

  it('a delivery of a day past retention, redelivered while retention runs: either kept and sent, or gone; no 5xx', async () => {
    const w = await webhook();
    const occurred = new Date(Date.now() - 40 * 86_400_000);
    await t.db.query(`UPDATE webhooks SET created_at = $2 WHERE id = $1`, [w, new Date(occurred.getTime() - 60_000)]);
    await t.db.query(`SELECT delivery_log_ensure_partitions($1::date, $1::date)`, [
      occurred.toISOString().slice(0, 10),
    ]);
    const [{ event }] = await t.db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at)
       VALUES (gen_random_uuid(), 'AccessRequestApproved', '{"ID":1}', $1, $1) RETURNING id AS event`,
      [occurred],
    );
    const [{ d }] = await t.db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, event_occurred_at, created_at, updated_at)
       VALUES (gen_random_uuid(), $1, $2, 'AccessRequestApproved', 'delivered', 1, $3, $3, $3) RETURNING id AS d`,
      [w, event, occurred],
    );
    await t.db.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, number, started_at, status_code, duration_ms, trigger, event_occurred_at)
       VALUES ($1, $2, 1, $3, 200, 3, 'scheduled', $3)`,
      [d, w, occurred],
    );
    const retention = t.app.get(DeliveryRetention);
    // as above: the accepted redelivery is still in flight when the last call is answered
    t.sink.responder = () => ({ status: 200, body: 'ok', delayMs: 5000 });
    const statuses = await Promise.all([
      ...Array.from({ length: 8 }, () =>
        call('redeliver', () => t.portal.post(`/portal-api/webhooks/${w}/deliveries/${d}/redeliver`, {})),
      ),
      retention.run().then(() => 0),
    ]);
    no5xx();
    const accepted = statuses.filter((s) => s === 200).length;
    expect(accepted).toBeLessThanOrEqual(1);
    if (accepted === 1) {
      // kept for its pending work until it was sent (the day may go right after)
      await eventually(
        () => Promise.resolve(t.sink.received.some((r) => r.headers['webhook-id'] === d)),
        30_000,
        'the redelivery',
      );
    } else {
      // the day went first: the delivery is gone, and said so
      expect(statuses.filter((s) => s === 404).length).toBe(8);
    }
    // once done, the day goes, its attempts with it
    await eventually(
      async () => {
        await retention.run();
        return (await t.portal.get(`/portal-api/webhooks/${w}/deliveries/${d}`)).status === 404;
      },
      30_000,
      'the day to go',
    );
    expect(
      (await t.db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1`, [d]))[0].n,
    ).toBe(0);
    expect(t.sink.received.filter((r) => r.headers['webhook-id'] === d)).toHaveLength(accepted);
  });

  it('a change committed while the queue refuses its jobs answers as usual, and the reconciler sends it', async () => {
    const w = await webhook();
    t.sink.responder = (_r, i) => (i === 0 ? { status: 500, body: 'busy' } : { status: 200, body: 'ok' });
    const d = await testSend(w);
    await settled(w, d);
    const failed = await eventually(async () => {
      const got = await delivery(w, d);
      return got.Status === 'failed' || got.Status === 'delivered' ? got : null;
    });
    const queue = t.app.get(DeliveryQueue).queue;
    const addBulk = queue.addBulk.bind(queue);
    queue.addBulk = () => Promise.reject(new Error('queue unavailable'));
    let status: number;
    try {
      status = await call('redeliver', () => t.portal.post(`/portal-api/webhooks/${w}/deliveries/${d}/redeliver`, {}));
    } finally {
      queue.addBulk = addBulk;
    }
    no5xx();
    expect(status).toBe(200);
    // no job was queued: the reconciler finds the delivery overdue and queues it
    const again = await eventually(
      async () => {
        const got = await delivery(w, d);
        return got.Status !== 'pending' ? got : null;
      },
      30_000,
      'the reconciler to send the redelivery',
    );
    expect(again.AttemptCount).toBe(failed.AttemptCount + 1);
    await wholeLog(d);
  });
});
