import { Webhook } from 'standardwebhooks';
import { emitEvent } from '../helpers/events';
import { Sink } from '../helpers/sink';
import { createWebhook } from '../helpers/portal';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

const MESSAGE = {
  ID: 7,
  AppID: 3,
  UserID: 1,
  Status: 'approved',
  Catalogue: 'Payments',
  Client: 'My app',
  Plan: 'Gold',
  Products: ['payments-api'],
  AuthType: 'authToken',
  CreatedAt: '2026-11-22 10:00',
  UpdatedAt: '2026-11-22 10:05',
};

describe('webhook delivery', () => {
  // a short retry schedule: first attempt at once, then 1 s, then 1 s
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1,1' } });
  let sink: Sink;
  beforeEach(async () => {
    sink = await Sink.start();
  });
  afterEach(() => sink.close());

  const webhook = (body: Record<string, unknown>) => createWebhook(t.portal, { URL: sink.url(), ...body });

  async function deliveries(webhookId: string) {
    return (await t.portal.get(`/portal-api/webhooks/${webhookId}/deliveries`)).body as any[];
  }

  async function settled(webhookId: string, status: string) {
    return eventually(
      async () => {
        const list = await deliveries(webhookId);
        if (list.length === 0 || list[0].Status !== status) return null;
        return (await t.portal.get(`/portal-api/webhooks/${webhookId}/deliveries/${list[0].ID}`)).body;
      },
      20_000,
      `a ${status} delivery`,
    );
  }

  it('delivers a signed POST with the webhook headers and the {Event, Message, Timestamp} body', async () => {
    const w = await webhook({ Headers: [{ Name: 'X-Api-Key', Value: 'k-123' }] });
    const eventId = await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const [req] = await sink.waitForCount(1);
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/hook');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-api-key']).toBe('k-123');
    expect(req.headers['user-agent']).toBe('gateway-management-webhooks/1.0');
    const body = JSON.parse(req.body);
    expect(body).toEqual({
      Event: 'AccessRequestApproved',
      Message: MESSAGE,
      Timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/),
    });
    // a receiver using the standardwebhooks package verifies it
    expect(new Webhook(w.Secret).verify(req.body, req.headers as Record<string, string>)).toEqual(body);

    const d = await settled(w.ID, 'delivered');
    expect(d).toEqual({
      ID: req.headers['webhook-id'],
      WebhookID: w.ID,
      EventID: eventId,
      Event: 'AccessRequestApproved',
      Status: 'delivered',
      AttemptCount: 1,
      NextAttemptAt: null,
      CreatedAt: expect.any(String),
      UpdatedAt: expect.any(String),
      Attempts: [
        {
          Number: 1,
          StartedAt: expect.any(String),
          StatusCode: 200,
          DurationMs: expect.any(Number),
          Error: null,
          ResponseBody: 'ok',
          Trigger: 'scheduled',
        },
      ],
    });
  });

  it('delivers only to webhooks subscribed to the event, and not to inactive ones', async () => {
    const subscribed = await webhook({ URL: sink.url('/yes') });
    await webhook({ URL: sink.url('/other-event'), Events: ['AccessRequestRejected'] });
    await webhook({ URL: sink.url('/inactive'), Active: false });
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    await settled(subscribed.ID, 'delivered');
    await emitEvent(t, 'AccessRequestRejected', MESSAGE); // reaches /other-event only
    await sink.waitForCount(2);
    expect(sink.received.map((r) => r.url).sort()).toEqual(['/other-event', '/yes']);
  });

  it('sends GET and DELETE deliveries without a body, signed over the empty string', async () => {
    const w = await webhook({ Method: 'GET', URL: sink.url('/get') });
    const w2 = await webhook({ Method: 'DELETE', URL: sink.url('/delete') });
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const got = await sink.waitForCount(2);
    for (const r of got) {
      expect(r.body).toBe('');
      const secret = r.method === 'GET' ? w.Secret : w2.Secret;
      expect(() => new Webhook(secret).verify('', r.headers as Record<string, string>)).not.toThrow();
    }
    expect(got.map((r) => r.method).sort()).toEqual(['DELETE', 'GET']);
  });

  it("uses PUT and PATCH when the webhook says so, and its own User-Agent over the service's", async () => {
    await webhook({ Method: 'PUT', URL: sink.url('/put'), Headers: [{ Name: 'User-Agent', Value: 'crm-hooks/2' }] });
    await webhook({ Method: 'PATCH', URL: sink.url('/patch') });
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const got = await sink.waitForCount(2);
    expect(got.map((r) => `${r.method} ${r.url} ${r.headers['user-agent']}`).sort()).toEqual([
      'PATCH /patch gateway-management-webhooks/1.0',
      'PUT /put crm-hooks/2',
    ]);
    expect(JSON.parse(got[0].body).Event).toBe('AccessRequestApproved');
  });

  it('lists pending deliveries by status, newest first, a page at a time', async () => {
    // each first attempt is told to come back in ten minutes: the deliveries stay pending
    sink.responder = () => ({ status: 503, headers: { 'retry-after': '600' } });
    const w = await webhook({});
    for (let i = 0; i < 3; i++) await emitEvent(t, 'AccessRequestApproved', { ...MESSAGE, ID: 100 + i });
    await sink.waitForCount(3);
    const list = (query: string) =>
      t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries?${query}`).then((r) => r.body as any[]);
    const all = await eventually(
      async () => {
        const l = await list('status=pending');
        return l.length === 3 && l.every((d) => d.AttemptCount === 1) ? l : null;
      },
      10_000,
      'three pending deliveries, each attempted once',
    );
    expect(all.map((d) => d.ID)).toEqual((await deliveries(w.ID)).map((d) => d.ID));
    const times = all.map((d) => Date.parse(d.CreatedAt));
    expect(times.every(Number.isFinite)).toBe(true);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect((await list('status=pending&per_page=2')).map((d) => d.ID)).toEqual(all.slice(0, 2).map((d) => d.ID));
    expect((await list('status=pending&per_page=2&page=2')).map((d) => d.ID)).toEqual([all[2].ID]);
    expect(await list('status=pending&per_page=2&page=3')).toEqual([]);
    expect(await list('status=delivered')).toEqual([]);
  });

  it('retries failures on the schedule with the same webhook-id, then fails; every attempt is logged', async () => {
    sink.responder = () => ({ status: 500, body: 'x'.repeat(5000) });
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'failed');
    expect(sink.received).toHaveLength(3);
    expect(new Set(sink.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([d.ID]));
    // 0 s, then ~1 s (±20 %) apart
    for (let i = 1; i < 3; i++) expect(sink.received[i].at - sink.received[i - 1].at).toBeGreaterThanOrEqual(750);
    expect(d.AttemptCount).toBe(3);
    expect(d.Attempts.map((a: any) => [a.Number, a.StatusCode, a.Error, a.Trigger])).toEqual([
      [1, 500, 'http_status', 'scheduled'],
      [2, 500, 'http_status', 'scheduled'],
      [3, 500, 'http_status', 'scheduled'],
    ]);
    expect(d.Attempts[0].ResponseBody).toHaveLength(4096);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries?status=failed`)).body).toHaveLength(1);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries?status=delivered`)).body).toHaveLength(0);

    // redelivered by hand: one manual attempt
    sink.responder = () => ({ status: 204 });
    const re = await t.portal.post(`/portal-api/webhooks/${w.ID}/deliveries/${d.ID}/redeliver`);
    expect(re.status).toBe(200);
    expect(re.body.Status).toBe('pending');
    const after = await settled(w.ID, 'delivered');
    expect(after.Attempts.at(-1)).toMatchObject({ Number: 4, StatusCode: 204, Error: null, Trigger: 'manual' });
    expect(sink.received.at(-1)!.headers['webhook-id']).toBe(d.ID);
  });

  it('records an answer holding NUL, or a character cut at 4 KiB, as text within the captured bytes', async () => {
    sink.responder = (_r, i) =>
      i === 0 ? { status: 500, body: 'no\u0000pe' } : { status: 200, body: 'a'.repeat(4095) + '€' };
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'delivered');
    expect(sink.received).toHaveLength(2); // recorded once each: nothing sent again for want of a record
    expect(d.Attempts.map((a: any) => [a.StatusCode, a.ResponseBody.length])).toEqual([
      [500, 5],
      [200, 4095],
    ]);
    expect(d.Attempts[0].ResponseBody).toBe('no\uFFFDpe');
    expect(d.Attempts[1].ResponseBody).toBe('a'.repeat(4095));
  });

  it('treats a redirect as a failure and does not follow it', async () => {
    sink.responder = (r) =>
      r.url === '/moved' ? { status: 200 } : { status: 302, headers: { location: sink.url('/moved') } };
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'failed');
    expect(d.Attempts.map((a: any) => a.StatusCode)).toEqual([302, 302, 302]);
    expect(sink.received.some((r) => r.url === '/moved')).toBe(false);
  });

  it('deactivates the webhook on 410 Gone', async () => {
    sink.responder = () => ({ status: 410 });
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'failed');
    expect(d.Attempts).toHaveLength(1);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.Active).toBe(false);
    // an inactive webhook gets nothing; redelivery asks to reactivate first
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/deliveries/${d.ID}/redeliver`)).status).toBe(409);
    expect((await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Active: true })).body.Active).toBe(true);
    sink.responder = () => ({ status: 200 });
    const rec = await t.portal.post(`/portal-api/webhooks/${w.ID}/recover`, {
      since: new Date(Date.now() - 60_000).toISOString(),
    });
    expect(rec.body).toEqual({ Requeued: 1 });
    await settled(w.ID, 'delivered');
  });

  it('honours Retry-After on 429 and 503', async () => {
    sink.responder = (_r, i) =>
      i === 0
        ? { status: 429, headers: { 'retry-after': '2' } }
        : i === 1
          ? { status: 503, headers: { 'retry-after': '0' } }
          : { status: 200 };
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'delivered');
    expect(d.Attempts.map((a: any) => a.StatusCode)).toEqual([429, 503, 200]);
    expect(sink.received[1].at - sink.received[0].at).toBeGreaterThanOrEqual(1900); // not the 1 s schedule
    // Retry-After: 0 does not bring the retry forward: the schedule's 1 s (± 20 %) still holds
    expect(sink.received[2].at - sink.received[1].at).toBeGreaterThanOrEqual(750);
  });

  it('gives up on a subscriber slower than the webhook Timeout and records a timeout', async () => {
    sink.responder = () => ({ hang: true });
    const w = await webhook({ Timeout: 1 });
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'failed');
    expect(d.Attempts.map((a: any) => [a.StatusCode, a.Error])).toEqual([
      [null, 'timeout'],
      [null, 'timeout'],
      [null, 'timeout'],
    ]);
    for (const a of d.Attempts) expect(a.DurationMs).toBeGreaterThanOrEqual(900);
    for (const a of d.Attempts) expect(a.DurationMs).toBeLessThan(5000);
  });

  it('keeps the status of an answer whose body never ends, and records the attempt as a timeout', async () => {
    sink.responder = (_r, i) => (i === 0 ? { status: 200, hangBody: true } : { status: 200 });
    const w = await webhook({ Timeout: 1 });
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'delivered');
    expect(d.Attempts.map((a: any) => [a.StatusCode, a.Error, a.ResponseBody])).toEqual([
      [200, 'timeout', 'the start of a body that never ends'], // what came before the time ran out
      [200, null, ''],
    ]);
  });

  it('counts a 2xx with response headers beyond 16 KiB as delivered', async () => {
    sink.responder = () => ({ status: 200, headers: { 'set-cookie': `s=${'c'.repeat(40_000)}` }, body: 'ok' });
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(w.ID, 'delivered');
    expect(d.Attempts.map((a: any) => [a.StatusCode, a.Error, a.ResponseBody])).toEqual([[200, null, 'ok']]);
    expect(sink.received).toHaveLength(1);
  });

  it('records a connection error when nothing listens', async () => {
    const port = sink.port;
    await sink.close();
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: 'down',
      URL: `http://127.0.0.1:${port}/x`,
      Events: ['AccessRequestApproved'],
    });
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const d = await settled(res.body.ID, 'failed');
    expect(d.Attempts.map((a: any) => a.Error)).toEqual(['connection', 'connection', 'connection']);
    sink = await Sink.start();
  });

  it('lists deliveries newest first, pages them, and 404s a foreign delivery id', async () => {
    const w = await webhook({});
    for (let i = 0; i < 3; i++) await emitEvent(t, 'AccessRequestApproved', { ...MESSAGE, ID: i });
    await sink.waitForCount(3);
    const list = await eventually(async () => {
      const l = await deliveries(w.ID);
      return l.length === 3 && l.every((d) => d.Status === 'delivered') ? l : null;
    });
    const created = list.map((d) => Date.parse(d.CreatedAt));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries?page=2&per_page=2`)).body).toHaveLength(1);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries?status=bogus`)).status).toBe(422);
    const other = await webhook({});
    expect((await t.portal.get(`/portal-api/webhooks/${other.ID}/deliveries/${list[0].ID}`)).status).toBe(404);
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/recover`, { since: 'yesterday' })).status).toBe(422);
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/deliveries/${list[0].ID}/redeliver`)).status).toBe(200);
  });

  it('recovers from an RFC 3339 since in its own offset, and refuses a date alone or a time without an offset (422 naming since)', async () => {
    sink.responder = () => ({ status: 500 });
    const w = await webhook({});
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const failed = await settled(w.ID, 'failed');
    const created = Date.parse(failed.CreatedAt);
    const recover = (since: unknown) => t.portal.post(`/portal-api/webhooks/${w.ID}/recover`, { since });
    for (const since of ['2026-11-22', '2026-11-22T10:00:00', '2026-11-22T10:00:00.000', '2026-11-22T10:00Z', 17e8]) {
      const bad = await recover(since);
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({
        status: 'error',
        errors: ['since must be an RFC 3339 date-time with seconds and a time zone, e.g. 2026-11-22T10:00:00Z'],
      });
    }
    // half a minute after the delivery, written five hours behind UTC: read as UTC it would take the delivery
    expect((await recover(inOffset(created + 30_000, -5 * 60))).body).toEqual({ Requeued: 0 });
    sink.responder = () => ({ status: 200 });
    // half a minute before it, five hours ahead: read as UTC it would miss it
    expect((await recover(inOffset(created - 30_000, 5 * 60))).body).toEqual({ Requeued: 1 });
    await settled(w.ID, 'delivered');
  });

  it('exposes Prometheus metrics for deliveries, latency, queue depth and the oldest pending delivery', async () => {
    const res = await t.http.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/webhook_delivery_attempts_total\{outcome="delivered",error="none"\} \d+/);
    expect(res.text).toContain('webhook_attempt_duration_seconds_bucket');
    expect(res.text).toMatch(/webhook_queue_depth\{queue="deliveries",state="waiting"\} \d+/);
    expect(res.text).toMatch(/webhook_oldest_pending_delivery_age_seconds \d/);
  });
});

/** `ms` as an RFC 3339 date-time in the offset `minutes` east of UTC, e.g. 2026-11-22T15:00:00.000+05:00. */
function inOffset(ms: number, minutes: number): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, -1);
  const abs = Math.abs(minutes);
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `${local}${minutes < 0 ? '-' : '+'}${hhmm}`;
}
