import { Webhook } from 'standardwebhooks';
import { deliveryCount, emitEvent } from '../helpers/events';
import { createWebhook, RFC3339 } from '../helpers/portal';
import { ReceivedRequest, Sink } from '../helpers/sink';
import { closeAfterEach } from '../helpers/use-fixture';
import { Service, startService } from '../helpers/use-service';
import { eventually } from '../helpers/eventually';

const MESSAGE = { ID: 7, AppID: 3, UserID: 1, Status: 'approved' };
const OPERATIONAL = ['WebhookDisabled', 'DeliveryFailed', 'WebhookEnabled'];

interface Delivered {
  Event: string;
  Message: Record<string, any>;
  Timestamp: string;
}

/** Distinct deliveries (receivers dedupe by webhook-id), verified with the webhook's secret. */
function bodies(received: ReceivedRequest[], secret: string): Delivered[] {
  const wh = new Webhook(secret);
  const distinct = [...new Map(received.map((r) => [r.headers['webhook-id'], r])).values()];
  return distinct.map((r) => wh.verify(r.body, r.headers as Record<string, string>) as Delivered);
}

const webhook = (t: Service, url: string, events: string[], extra: Record<string, unknown> = {}) =>
  createWebhook(t.portal, { URL: url, Events: events, ...extra });

describe('automatic disabling and operational events', () => {
  const closer = closeAfterEach();
  let failing: Sink;
  let operator: Sink;
  beforeEach(async () => {
    failing = closer.adopt(await Sink.start());
    operator = closer.adopt(await Sink.start());
  });

  it('switches off a webhook whose every attempt failed for WEBHOOK_DISABLE_AFTER; an operator webhook receives WebhookDisabled once; PUT Active re-enables it', async () => {
    const t = closer.adopt(
      await startService({
        vars: { WEBHOOK_DISABLE_AFTER: '3s', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1,1,1,1,1,1' },
      }),
    );
    failing.responder = () => ({ status: 500, body: 'down' });
    // the failing webhook also subscribes to the operational events: it must never get those about itself
    const w = await webhook(t, failing.url(), ['AccessRequestApproved', ...OPERATIONAL], { Name: 'fragile' });
    const op = await webhook(t, operator.url(), OPERATIONAL, { Name: 'ops' });
    for (let i = 0; i < 3; i++) await emitEvent(t, 'AccessRequestApproved', { ...MESSAGE, ID: i });

    const off = await eventually(
      async () => {
        const got = (await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body;
        return got.Active === false ? got : null;
      },
      30_000,
      'the failing webhook switched off',
    );
    expect(off.DisabledReason).toBe('failing');
    expect(off.DisabledAt).toMatch(RFC3339);
    // failing for at least the window: from the first failed attempt to the switch-off
    const [first] = await t.db.query(
      `SELECT min(started_at) AS at FROM webhook_delivery_attempts WHERE webhook_id = $1`,
      [w.ID],
    );
    expect(new Date(off.DisabledAt).getTime() - new Date(first.at).getTime()).toBeGreaterThanOrEqual(3000);
    const [ok] = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE webhook_id = $1 AND error IS NULL`,
      [w.ID],
    );
    expect(ok.n).toBe(0);

    await operator.waitFor(
      (r) => bodies(r, op.Secret).some((b) => b.Event === 'WebhookDisabled'),
      15_000,
      'WebhookDisabled',
    );
    const disabled = bodies(operator.received, op.Secret).filter((b) => b.Event === 'WebhookDisabled');
    expect(disabled).toHaveLength(1);
    expect(disabled[0].Message).toEqual({
      WebhookID: w.ID,
      Name: 'fragile',
      URL: failing.url(),
      Reason: 'failing',
      DisabledAt: off.DisabledAt,
    });
    // no further attempts once off: the pending deliveries fail without one
    await eventually(
      async () => (await deliveryCount(t, w.ID, 'pending')) === 0,
      15_000,
      'no delivery of the switched-off webhook left pending',
    );
    const attemptsWhenOff = failing.received.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(failing.received.length).toBe(attemptsWhenOff);
    expect(bodies(operator.received, op.Secret).filter((b) => b.Event === 'WebhookDisabled')).toHaveLength(1); // still once
    const metrics = (await t.http.get('/metrics')).text;
    expect(metrics).toContain('webhooks_disabled{reason="failing"} 1');
    expect(metrics).toContain('webhooks_disabled_total{reason="failing"} 1');

    // re-enabled by hand: the reason and time are cleared, and operators hear of it
    failing.responder = () => ({ status: 200 });
    const put = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Active: true });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ Active: true, DisabledReason: null, DisabledAt: null });
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body).toMatchObject({
      Active: true,
      DisabledReason: null,
      DisabledAt: null,
    });
    await operator.waitFor(
      (r) => bodies(r, op.Secret).some((b) => b.Event === 'WebhookEnabled'),
      15_000,
      'WebhookEnabled',
    );
    const enabled = bodies(operator.received, op.Secret).find((b) => b.Event === 'WebhookEnabled')!;
    expect(enabled.Message).toEqual({
      WebhookID: w.ID,
      Name: 'fragile',
      URL: failing.url(),
      EnabledAt: expect.stringMatching(RFC3339),
    });

    // it works again, and its failing clock starts afresh
    await emitEvent(t, 'AccessRequestApproved', { ...MESSAGE, ID: 99 });
    await failing.waitFor((r) => r.some((x) => x.body.includes('"ID":99')), 15_000, 'a delivery after re-enabling');
    await eventually(
      async () => {
        const [row] = await t.db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [w.ID]);
        return row.failing_since === null;
      },
      10_000,
      'the failing clock stopped',
    );

    // never an operational event about itself, though subscribed to them all
    const own = bodies(
      failing.received.filter((r) => r.body.length > 0),
      w.Secret,
    ).filter((b) => OPERATIONAL.includes(b.Event));
    expect(own.filter((b) => b.Message.WebhookID === w.ID)).toEqual([]);
  });

  it('raises DeliveryFailed when a delivery used its whole schedule, and WebhookDisabled with reason gone on 410 or manual on PUT', async () => {
    const t = closer.adopt(await startService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1,1' } }));
    const gone = closer.adopt(await Sink.start());
    failing.responder = () => ({ status: 503, body: 'nope' });
    gone.responder = () => ({ status: 410 });
    const f = await webhook(t, failing.url(), ['AccessRequestApproved', 'DeliveryFailed'], { Name: 'flaky' });
    const g = await webhook(t, gone.url(), ['AccessRequestRejected'], { Name: 'gone' });
    const op = await webhook(t, operator.url(), OPERATIONAL, { Name: 'ops' });
    const eventId = await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    await emitEvent(t, 'AccessRequestRejected', MESSAGE);

    await operator.waitFor(
      (r) => bodies(r, op.Secret).some((b) => b.Event === 'DeliveryFailed'),
      20_000,
      'DeliveryFailed',
    );
    await operator.waitFor(
      (r) => bodies(r, op.Secret).some((b) => b.Event === 'WebhookDisabled'),
      20_000,
      'WebhookDisabled',
    );
    const [delivery] = await t.db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND event_id = $2`, [
      f.ID,
      eventId,
    ]);
    const failed = bodies(operator.received, op.Secret).filter((b) => b.Event === 'DeliveryFailed');
    expect(failed).toHaveLength(1);
    expect(failed[0].Message).toEqual({
      WebhookID: f.ID,
      Name: 'flaky',
      URL: failing.url(),
      DeliveryID: delivery.id,
      EventID: eventId,
      Event: 'AccessRequestApproved',
      AttemptCount: 3,
      LastStatusCode: 503,
      LastError: 'http_status',
      FailedAt: expect.stringMatching(RFC3339),
    });
    const goneOff = bodies(operator.received, op.Secret).filter((b) => b.Event === 'WebhookDisabled');
    expect(goneOff).toHaveLength(1);
    const gw = (await t.portal.get(`/portal-api/webhooks/${g.ID}`)).body;
    expect(gw).toMatchObject({ Active: false, DisabledReason: 'gone', DisabledAt: expect.stringMatching(RFC3339) });
    expect(goneOff[0].Message).toEqual({
      WebhookID: g.ID,
      Name: 'gone',
      URL: gone.url(),
      Reason: 'gone',
      DisabledAt: gw.DisabledAt,
    });
    // the failing webhook, subscribed to DeliveryFailed, was not told about its own failure
    expect(failing.received.every((r) => !r.body.includes('"DeliveryFailed"'))).toBe(true);

    // switched off by hand: reason manual, and operators hear of it
    const put = await t.portal.put(`/portal-api/webhooks/${f.ID}`, { Active: false });
    expect(put.body).toMatchObject({
      Active: false,
      DisabledReason: 'manual',
      DisabledAt: expect.stringMatching(RFC3339),
    });
    await operator.waitFor(
      (r) => bodies(r, op.Secret).some((b) => b.Event === 'WebhookDisabled' && b.Message.Reason === 'manual'),
      15_000,
      'WebhookDisabled (manual)',
    );
    // PUT with Active unchanged says nothing more
    expect((await t.portal.put(`/portal-api/webhooks/${f.ID}`, { Active: false, Name: 'still off' })).status).toBe(200);
    const [events] = await t.db.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE name = 'WebhookDisabled' AND payload->>'WebhookID' = $1`,
      [f.ID],
    );
    expect(events.n).toBe(1);
  });

  it('a failed delivery of an operational event raises no DeliveryFailed of its own', async () => {
    const t = closer.adopt(await startService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1' } }));
    failing.responder = () => ({ status: 500 });
    operator.responder = () => ({ status: 500 });
    const f = await webhook(t, failing.url(), ['AccessRequestApproved']);
    const op = await webhook(t, operator.url(), ['DeliveryFailed']);
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    // the operator's delivery of DeliveryFailed about f fails its whole schedule too
    await eventually(
      async () => (await deliveryCount(t, op.ID, 'failed')) === 1,
      20_000,
      "the operator's delivery failed",
    );
    await new Promise((r) => setTimeout(r, 1500));
    const rows: { about: string }[] = await t.db.query(
      `SELECT payload->>'WebhookID' AS about FROM outbox_events WHERE name = 'DeliveryFailed'`,
    );
    expect(rows.map((r) => r.about)).toEqual([f.ID]);
  });
});
