import { randomUUID } from 'node:crypto';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

/**
 * A webhook's own headers are sent with every delivery, so a value HTTP cannot carry would fail every one of them:
 * such values are refused wherever headers are set, and a header stored before that rule is reported truthfully.
 */
describe('webhook header names and values', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,60' }, receiver: true });

  const UNSENDABLE = ['a\u0001b', 'a\u007fb', '🙂', 'a\u200bb', 'a\u001fb', ' lead', 'x\t'];
  const CONNECTION_NAMES = ['Keep-Alive', 'upgrade', 'Expect', 'Connection', 'transfer-encoding'];

  const valueRefused = (errors: string[], path: string) =>
    expect(errors).toEqual([expect.stringMatching(new RegExp(`^${path.replace(/\./g, '\\.')} must be a valid HTTP`))]);

  it('refuses a value HTTP cannot carry on POST and PUT .../headers, leaving the headers as they were', async () => {
    const w = await t.webhook();
    const kept = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-Kept', Value: 'v' });
    expect(kept.status).toBe(201);
    for (const Value of UNSENDABLE) {
      const added = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-Ctl', Value });
      expect({ Value, status: added.status }).toEqual({ Value, status: 422 });
      valueRefused(added.body.errors, 'Value');
      const replaced = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${kept.body.ID}`, {
        Name: 'X-Kept',
        Value,
      });
      expect({ Value, status: replaced.status }).toEqual({ Value, status: 422 });
      valueRefused(replaced.body.errors, 'Value');
    }
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/headers`)).body).toEqual([kept.body]);
  });

  it('refuses the same values in Headers on POST and PUT /webhooks', async () => {
    const w = await t.webhook({ Headers: [{ Name: 'X-Kept', Value: 'v' }] });
    for (const Value of UNSENDABLE) {
      const Headers = [
        { Name: 'X-Ok', Value: 'fine' },
        { Name: 'X-Ctl', Value },
      ];
      const created = await t.portal.post('/portal-api/webhooks', {
        Name: 'n',
        URL: t.sink.url('/never'),
        Events: ['AccessRequestApproved'],
        Headers,
      });
      expect({ Value, status: created.status }).toEqual({ Value, status: 422 });
      valueRefused(created.body.errors, 'Headers.1.Value');
      const updated = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Headers });
      expect({ Value, status: updated.status }).toEqual({ Value, status: 422 });
      valueRefused(updated.body.errors, 'Headers.1.Value');
    }
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.Headers).toEqual([
      expect.objectContaining({ Name: 'X-Kept', Value: 'v' }),
    ]);
  });

  it('refuses Headers whose items are not objects (an array of arrays too) on POST and PUT, with a 422 not a 500', async () => {
    const w = await t.webhook({ Headers: [{ Name: 'X-Kept', Value: 'v' }] });
    const stored = (await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body;
    const before = (await t.portal.get('/portal-api/webhooks?per_page=100')).body.length;
    for (const Headers of [
      [[{ Name: 'X-A', Value: 'b' }]],
      [[]],
      [{ Name: 'X-A', Value: 'b' }, [5]],
      [5],
      [null],
      ['x'],
    ]) {
      const created = await t.portal.post('/portal-api/webhooks', {
        Name: 'n',
        URL: 'http://127.0.0.1:9/h',
        Events: ['AccessRequestApproved'],
        Headers,
      });
      expect({ Headers, status: created.status, body: created.body }).toEqual({
        Headers,
        status: 422,
        body: { status: 'error', errors: ['Headers: each of Headers must be an object {"Name": ..., "Value": ...}'] },
      });
      const replaced = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Headers });
      expect({ Headers, status: replaced.status }).toEqual({ Headers, status: 422 });
    }
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body).toEqual(stored);
    expect((await t.portal.get('/portal-api/webhooks?per_page=100')).body).toHaveLength(before);
  });

  it('refuses exactly the names and values the served OpenAPI document calls invalid', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const schema = doc.components.schemas.WebhookHeaderInput.properties;
    const documented = (field: 'Name' | 'Value', text: string) => {
      const { pattern, minLength = 0, maxLength } = schema[field];
      return new RegExp(pattern, 'u').test(text) && text.length >= minLength && text.length <= maxLength;
    };
    const w = await t.webhook();
    const names = ['X-Ok', 'x_1', "!#$%&'*+-.^_`|~", '', 'X A', 'X:A', 'Ä', '中', 'X-\u00e9', 'a'.repeat(257)];
    const values = ['v', 'a b', 'a\tb', '\u00e9\u00ff', '', ' v', 'v ', '\u0100', '中', 'a\nb', 'a\u007fb'];
    // (the names the service sets itself are refused too, as the description says: none of them here)
    for (const Name of names) {
      const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name, Value: 'v' });
      expect({ Name, created: res.status === 201 }).toEqual({ Name, created: documented('Name', Name) });
      if (res.status === 201) await t.portal.delete(`/portal-api/webhooks/${w.ID}/headers/${res.body.ID}`);
    }
    for (const Value of values) {
      const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-Value', Value });
      expect({ Value, created: res.status === 201 }).toEqual({ Value, created: documented('Value', Value) });
      if (res.status === 201) await t.portal.delete(`/portal-api/webhooks/${w.ID}/headers/${res.body.ID}`);
    }
  });

  it('names a header once: a name repeated in any case is refused, on create, on update and under /headers', async () => {
    const Headers = [
      { Name: 'X-D', Value: '1' },
      { Name: 'X-E', Value: '2' },
      { Name: 'x-d', Value: '3' },
    ];
    const created = await t.portal.post('/portal-api/webhooks', {
      Name: 'n',
      URL: t.sink.url('/never'),
      Events: ['AccessRequestApproved'],
      Headers,
    });
    expect(created.status).toBe(422);
    expect(created.body.errors).toEqual([
      'Headers.2.Name repeats Headers.0.Name: a header is named once (names are case-insensitive)',
    ]);
    const w = await t.webhook({ Headers: [{ Name: 'X-B', Value: 'b' }] });
    expect((await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Headers })).status).toBe(422);

    const again = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'x-b', Value: 'other' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      status: 'error',
      errors: ['the webhook already has a header named X-B (names are case-insensitive): change that one instead'],
    });
    const c = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-C', Value: 'c' });
    expect(c.status).toBe(201);
    const renamed = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${c.body.ID}`, {
      Name: 'X-b',
      Value: 'c',
    });
    expect(renamed.status).toBe(409);
    // a header may keep its own name in another case
    const recased = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${c.body.ID}`, {
      Name: 'x-c',
      Value: 'c2',
    });
    expect(recased.status).toBe(200);
    expect(
      (await t.portal.get(`/portal-api/webhooks/${w.ID}/headers`)).body.map((h: any) => [h.Name, h.Value]),
    ).toEqual([
      ['X-B', 'b'],
      ['x-c', 'c2'],
    ]);
  });

  it('refuses the headers of the connection itself, which the HTTP client will not send', async () => {
    const w = await t.webhook();
    for (const Name of CONNECTION_NAMES) {
      for (const res of [
        await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name, Value: 'x' }),
        await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Headers: [{ Name, Value: 'x' }] }),
      ]) {
        expect({ Name, status: res.status }).toEqual({ Name, status: 422 });
        expect(res.body.errors.join(' ')).toMatch(/Name must not be one of the headers/);
      }
    }
  });

  it('delivers Latin-1 values and tabs or spaces between characters exactly as configured', async () => {
    const Headers = [
      { Name: 'X-Latin', Value: 'ümlaut café' },
      { Name: 'X-Tab', Value: 'a\tb' },
      { Name: 'X-Empty', Value: '' },
    ];
    const w = await t.webhook({ Headers });
    const test = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, {});
    expect(test.status).toBe(202);
    await t.sink.waitFor(() => t.sink.received.some((r) => r.url === w.path), 15_000, 'the test delivery');
    const req = t.sink.received.find((r) => r.url === w.path)!;
    expect(req.headers).toMatchObject({ 'x-latin': 'ümlaut café', 'x-tab': 'a\tb', 'x-empty': '' });
  });

  it('reports a stored header the HTTP client refuses as rejected, naming the header, never as a connection error', async () => {
    const w = await t.webhook();
    // saved before values were checked: only the database can hold it now
    await t.db.query(
      `INSERT INTO webhook_headers (id, webhook_id, name, value, created_at, updated_at) VALUES ($1, $2, 'X-Ctl', $3, now(), now())`,
      [randomUUID(), w.ID, 'a\u0001b'],
    );
    const { DeliveryID } = (await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, {})).body;
    const d = await eventually(
      async () => {
        const got = (await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${DeliveryID}`)).body;
        return got.Attempts?.length ? got : null;
      },
      15_000,
      'the first attempt',
    );
    expect(d.Attempts[0]).toMatchObject({
      StatusCode: null,
      Error: 'rejected',
      ResponseBody: expect.stringMatching(/^not sent, the HTTP client refused the request: .*invalid X-Ctl header/i),
    });
    expect(d.Attempts[0].ResponseBody).not.toContain('a\u0001b');
    // retried on the schedule like any failure, so fixing the header lets the next attempt through
    expect(d.Status).toBe('pending');
    expect(t.sink.received.filter((r) => r.url === w.path)).toEqual([]);
  });
});
