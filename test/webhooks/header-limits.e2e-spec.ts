import { HEADER_LIMITS } from '../../src/webhooks/send/header-fields';
import { createWebhook } from '../helpers/portal';
import { useService } from '../helpers/use-service';

type Header = { Name: string; Value: string };

/**
 * `n` headers X-H00, X-H01, ... whose names and values come to `chars` characters together (the first ones take
 * what does not divide evenly).
 */
function headers(n: number, chars: number): Header[] {
  const names = Array.from({ length: n }, (_, i) => `X-H${String(i).padStart(2, '0')}`);
  const valueChars = chars - names.join('').length;
  return names.map((Name, i) => ({
    Name,
    Value: 'v'.repeat(Math.floor(valueChars / n) + (i < valueChars % n ? 1 : 0)),
  }));
}

const chars = (hs: Header[]) => hs.reduce((n, h) => n + h.Name.length + h.Value.length, 0);
const TOO_MANY = (n: number) => `Headers must be at most 50 per webhook (it would have ${n})`;
const TOO_LONG = (n: number) =>
  `Headers must be at most 8192 characters per webhook, names and values together (they would be ${n})`;

/**
 * Every delivery carries the webhook's own headers, so their number and size are bounded wherever they are set: in
 * Headers on create and update, and one at a time under /headers, where what is stored already counts.
 */
describe("limits on the number and size of a webhook's headers", () => {
  const t = useService({ receiver: true });

  const base = { URL: 'https://hooks.example.com/h', Events: ['AccessRequestApproved'] };
  const stored = async (id: string): Promise<Header[]> =>
    (await t.portal.get(`/portal-api/webhooks/${id}/headers`)).body.map(({ Name, Value }: Header) => ({ Name, Value }));

  it('are the documented ones', () => {
    expect(HEADER_LIMITS).toEqual({ count: 50, total: 8192, nameLength: 256, valueLength: 7680 });
    expect(chars(headers(50, 8192))).toBe(8192);
  });

  it('takes a webhook at exactly the limits, on create, on update and one header at a time', async () => {
    const full = headers(50, 8192);
    const created = await t.portal.post('/portal-api/webhooks', { Name: 'full', ...base, Headers: full });
    expect(created.status).toBe(201);
    expect(created.body.Headers).toHaveLength(50);
    const w = await createWebhook(t.portal, { Name: 'grown', ...base });
    expect((await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Headers: full })).status).toBe(200);
    expect(await stored(w.ID)).toEqual(full);

    const one = await createWebhook(t.portal, { Name: 'one by one', ...base });
    for (const h of full) {
      const res = await t.portal.post(`/portal-api/webhooks/${one.ID}/headers`, h);
      expect([h.Name, res.status]).toEqual([h.Name, 201]);
    }
    expect(await stored(one.ID)).toEqual(full);
  });

  it('refuses Headers of more than 50 on create and on update with 422 naming the limit', async () => {
    const created = await t.portal.post('/portal-api/webhooks', {
      Name: 'too many',
      ...base,
      Headers: headers(51, 600),
    });
    expect(created.status).toBe(422);
    expect(created.body).toEqual({ status: 'error', errors: [TOO_MANY(51)] });
    expect(await t.db.query(`SELECT 1 FROM webhooks WHERE name = 'too many'`)).toEqual([]);

    const kept = [{ Name: 'X-Kept', Value: 'v' }];
    const w = await createWebhook(t.portal, { Name: 'kept', ...base, Headers: kept });
    const updated = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Headers: headers(60, 600) });
    expect(updated.status).toBe(422);
    expect(updated.body).toEqual({ status: 'error', errors: [TOO_MANY(60)] });
    expect(await stored(w.ID)).toEqual(kept);
  });

  it('refuses Headers over 8192 characters together on create and on update, and lists every reason', async () => {
    const created = await t.portal.post('/portal-api/webhooks', {
      Name: 'too long',
      ...base,
      Headers: headers(2, 8193),
    });
    expect(created.status).toBe(422);
    expect(created.body).toEqual({ status: 'error', errors: [TOO_LONG(8193)] });
    expect(await t.db.query(`SELECT 1 FROM webhooks WHERE name = 'too long'`)).toEqual([]);

    const w = await createWebhook(t.portal, { Name: 'kept too', ...base });
    const both = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Timeout: 0, Headers: headers(51, 9000) });
    expect(both.status).toBe(422);
    expect(both.body.errors).toEqual(
      expect.arrayContaining(['Timeout must be at least 1 second', TOO_MANY(51), TOO_LONG(9000)]),
    );
    expect(await stored(w.ID)).toEqual([]);
  });

  it('bounds one header: a name of 256 and a value of 7680 characters, no longer', async () => {
    const w = await createWebhook(t.portal, { Name: 'one long', ...base });
    const longest = { Name: `X-${'n'.repeat(254)}`, Value: 'v'.repeat(7680) };
    const added = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, longest);
    expect(added.status).toBe(201);
    for (const h of [
      { ...longest, Value: 'v'.repeat(7681) },
      { ...longest, Name: `X-${'n'.repeat(255)}` },
    ]) {
      const res = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${added.body.ID}`, h);
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual([expect.stringMatching(/^(Name|Value) must be shorter than or equal to/)]);
    }
    expect(await stored(w.ID)).toEqual([longest]);
  });

  it('refuses a header POSTed beyond 50, or beyond 8192 characters, storing nothing', async () => {
    const full = headers(50, 1000);
    const w = await createWebhook(t.portal, { Name: 'at count', ...base, Headers: full });
    const { UpdatedAt } = (await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body;
    const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-One-More', Value: 'x' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ status: 'error', errors: [TOO_MANY(51)] });
    expect(await stored(w.ID)).toEqual(full);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.UpdatedAt).toBe(UpdatedAt);

    const long = headers(10, 8190);
    const v = await createWebhook(t.portal, { Name: 'at size', ...base, Headers: long });
    const over = await t.portal.post(`/portal-api/webhooks/${v.ID}/headers`, { Name: 'X-A', Value: '' });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ status: 'error', errors: [TOO_LONG(8193)] });
    expect(await stored(v.ID)).toEqual(long);
    // what still fits is taken
    expect((await t.portal.post(`/portal-api/webhooks/${v.ID}/headers`, { Name: 'XY', Value: '' })).status).toBe(201);
  });

  it('never lets concurrent POSTs at the edge take the webhook over a limit', async () => {
    const w = await createWebhook(t.portal, { Name: 'race count', ...base, Headers: headers(45, 500) });
    const tries = Array.from({ length: 12 }, (_, i) => ({ Name: `X-Race-${i}`, Value: 'r' }));
    const answers = await Promise.all(tries.map((h) => t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, h)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(7).fill(422)]);
    for (const r of answers.filter((a) => a.status === 422)) expect(r.body.errors).toEqual([TOO_MANY(51)]);
    expect(await stored(w.ID)).toHaveLength(50);

    // 8000 characters stored, 12 concurrent additions of 60 each: three fit
    const v = await createWebhook(t.portal, { Name: 'race size', ...base, Headers: headers(10, 8000) });
    const long = Array.from({ length: 12 }, (_, i) => ({
      Name: `X-R${String(i).padStart(2, '0')}`,
      Value: 'r'.repeat(55),
    }));
    const added = await Promise.all(long.map((h) => t.portal.post(`/portal-api/webhooks/${v.ID}/headers`, h)));
    expect(added.filter((r) => r.status === 201)).toHaveLength(3);
    expect(added.filter((r) => r.status === 422)).toHaveLength(9);
    expect(chars(await stored(v.ID))).toBe(8180);
  });

  it('counts the header a PUT replaces out of the limits', async () => {
    const full = headers(50, 8192);
    const w = await createWebhook(t.portal, { Name: 'replace', ...base, Headers: full });
    const [first] = (await t.portal.get(`/portal-api/webhooks/${w.ID}/headers`)).body;
    const len = first.Name.length + first.Value.length;

    // at 50 headers and 8192 characters, a header of the same size replaces it
    const same = { Name: 'X-New', Value: 'n'.repeat(len - 5) };
    const replaced = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${first.ID}`, same);
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ ID: first.ID, ...same, WebhookID: w.ID });

    // one character more is over, and changes nothing
    const longer = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${first.ID}`, {
      Name: 'X-New',
      Value: 'n'.repeat(len - 4),
    });
    expect(longer.status).toBe(422);
    expect(longer.body).toEqual({ status: 'error', errors: [TOO_LONG(8193)] });
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/headers/${first.ID}`)).body).toEqual({
      ID: first.ID,
      ...same,
      WebhookID: w.ID,
    });

    // a smaller one frees room that a POST can then use, and no more
    const shorter = await t.portal.put(`/portal-api/webhooks/${w.ID}/headers/${first.ID}`, { Name: 'X-S', Value: '' });
    expect(shorter.status).toBe(200);
    expect(chars(await stored(w.ID))).toBe(8192 - len + 3);
    expect((await t.portal.delete(`/portal-api/webhooks/${w.ID}/headers/${first.ID}`)).status).toBe(200);
    expect(
      (await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-A', Value: 'a'.repeat(len - 3) })).status,
    ).toBe(201);
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/headers`, { Name: 'X-B', Value: '' })).status).toBe(422);
  });

  it('delivers a webhook at the limits to a Node.js HTTP server with its default header size', async () => {
    const Headers = [{ Name: `X-${'n'.repeat(254)}`, Value: 'v'.repeat(7680) }, ...headers(49, 8192 - 7936)];
    expect([Headers.length, chars(Headers)]).toEqual([50, 8192]);
    const w = await t.webhook({ Headers });
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, {})).status).toBe(202);
    await t.sink.waitFor((r) => r.some((x) => x.url === w.path), 15_000, 'the test delivery');
    const req = t.sink.received.find((r) => r.url === w.path)!;
    for (const h of Headers) expect([h.Name, req.headers[h.Name.toLowerCase()]]).toEqual([h.Name, h.Value]);
  });
});
