import { Client } from 'pg';
import { eventually } from '../helpers/eventually';
import { createWebhook, PORTAL_TIME, UUID } from '../helpers/portal';
import { TEST_SECRETS } from '../helpers/test-env';
import { useService } from '../helpers/use-service';
import { sessionsWaitingForLocks } from '../helpers/locks';

describe('webhook subscriptions (portal API)', () => {
  const t = useService();

  it('creates a webhook (201) with defaults, Headers and a whsec_ Secret, as interface 2.4', async () => {
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: 'CRM',
      URL: 'https://hooks.example.com/x',
      Events: ['AccessRequestApproved'],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ID: expect.stringMatching(UUID),
      Name: 'CRM',
      URL: 'https://hooks.example.com/x',
      Method: 'POST',
      Timeout: 30,
      Headers: [],
      Events: ['AccessRequestApproved'],
      Active: true,
      CreatedAt: expect.stringMatching(PORTAL_TIME),
      UpdatedAt: expect.stringMatching(PORTAL_TIME),
      DisabledReason: null,
      DisabledAt: null,
      RateLimit: null,
      Ordered: false,
      Secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{32}$/),
      SignatureScheme: 'v1',
      PublicKey: null,
    });
    const got = await t.portal.get(`/portal-api/webhooks/${res.body.ID}`);
    expect(got.status).toBe(200);
    const { Secret, PublicKey, ...withoutSecret } = res.body;
    expect(got.body).toEqual(withoutSecret);
    expect((await t.portal.get(`/portal-api/webhooks/${res.body.ID}/secret`)).body).toEqual({
      Secret,
      SignatureScheme: 'v1',
      PublicKey,
      PreviousSecretExpiresAt: null,
    });
  });

  it('keeps the signing secret encrypted at rest', async () => {
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: 'S',
      URL: 'https://h.example.com',
      Events: ['AccessRequestCreated'],
    });
    const [row] = await t.db.query(`SELECT secret_encrypted FROM webhooks WHERE id = $1`, [res.body.ID]);
    expect(row.secret_encrypted).not.toContain(res.body.Secret.slice(6));
    expect(JSON.stringify(row)).not.toContain('whsec_');
  });

  it('accepts every allowed method, timeout bounds and headers given at creation', async () => {
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: 'All',
      URL: 'http://127.0.0.1:9/x',
      Method: 'PATCH',
      Timeout: 60,
      Events: ['AccessRequestApproved', 'ApplicationRegistered', 'UserRegistered'],
      Headers: [{ Name: 'X-Api-Key', Value: 'k1' }],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      Method: 'PATCH',
      Timeout: 60,
      Headers: [{ ID: expect.stringMatching(UUID), Name: 'X-Api-Key', Value: 'k1' }],
    });
    const lower = await t.portal.post('/portal-api/webhooks', {
      Name: 'lower',
      URL: 'https://a.example.com',
      Method: 'put',
      Events: ['AccessRequestApproved'],
    });
    expect(lower.body.Method).toBe('PUT');
  });

  it('rejects invalid input with 422 listing every reason', async () => {
    const res = await t.portal.post('/portal-api/webhooks', {
      URL: 'ftp://x',
      Method: 'TRACE',
      Timeout: 0,
      Events: ['Nope'],
    });
    expect(res.status).toBe(422);
    expect(res.body.status).toBe('error');
    const text = res.body.errors.join('\n');
    expect(text).toContain('Name is required');
    expect(text).toContain('URL must be an absolute http(s) URL');
    expect(text).toContain('Method must be one of POST, PUT, PATCH, GET, DELETE');
    expect(text).toContain('Timeout must be at least 1 second');
    expect(text).toContain('each of Events must be one of');
    const more = await t.portal.post('/portal-api/webhooks', { Name: 'x', URL: '/relative', Timeout: 61, Events: [] });
    expect(more.status).toBe(422);
    expect(more.body.errors).toEqual(
      expect.arrayContaining([
        'URL must be an absolute http(s) URL',
        'Timeout must be at most 60 seconds',
        'Events must be a non-empty array',
      ]),
    );
    const types = await t.portal.post('/portal-api/webhooks', {
      Name: 'x',
      URL: 'https://a.example.com',
      Timeout: '5',
      Events: 'AccessRequestApproved',
    });
    expect(types.status).toBe(422);
    // of a value of the wrong type, only what type it must be, each reason once
    expect(types.body.errors).toEqual([
      'Timeout must be an integer number of seconds',
      'Events must be a non-empty array',
    ]);
    const missing = await t.portal.post('/portal-api/webhooks', {
      Name: 'x',
      URL: 'https://a.example.com',
      Headers: [{ Value: 'v' }],
    });
    expect(missing.body.errors).toEqual(['Events must be a non-empty array', 'Headers.0.Name must be a string']);
    const notAList = await t.portal.post('/portal-api/webhooks', {
      Name: 'x',
      URL: 'https://a.example.com',
      Events: ['AccessRequestApproved'],
      Headers: { 'X-A': '1' },
    });
    expect(notAList.status).toBe(422);
    expect(notAList.body.errors).toEqual(['Headers must be an array']);
    const reserved = await t.portal.post('/portal-api/webhooks', {
      Name: 'x',
      URL: 'https://a.example.com',
      Events: ['AccessRequestApproved'],
      Headers: [{ Name: 'webhook-signature', Value: 'x' }],
    });
    expect(reserved.status).toBe(422);
  });

  it('refuses a blank Name or one with control characters, on create and on update', async () => {
    const w = await createWebhook(t.portal, { Name: 'Visible', URL: 'https://a.example.com' });
    for (const Name of [' ', '\t', '\n', '\u200b', 'a\u0007b', 'a\u007fb']) {
      for (const res of [
        await t.portal.post('/portal-api/webhooks', {
          Name,
          URL: 'https://a.example.com',
          Events: ['AccessRequestApproved'],
        }),
        await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Name }),
      ]) {
        expect({ Name, status: res.status }).toEqual({ Name, status: 422 });
        expect(res.body.errors).toEqual([
          expect.stringMatching(/^Name must not (be blank|contain control characters)/),
        ]);
      }
    }
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.Name).toBe('Visible');
  });

  it('takes an optional RateLimit (1-10000 per second, null for none) and Ordered, and refuses anything else with 422', async () => {
    const base = { Name: 'flow', URL: 'https://a.example.com', Events: ['AccessRequestApproved'] };
    const res = await t.portal.post('/portal-api/webhooks', { ...base, RateLimit: 5, Ordered: true });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      RateLimit: 5,
      Ordered: true,
      Active: true,
      DisabledReason: null,
      DisabledAt: null,
    });
    const id = res.body.ID;
    expect((await t.portal.put(`/portal-api/webhooks/${id}`, { RateLimit: 10000 })).body).toMatchObject({
      RateLimit: 10000,
      Ordered: true,
    });
    expect((await t.portal.put(`/portal-api/webhooks/${id}`, { RateLimit: null, Ordered: false })).body).toMatchObject({
      RateLimit: null,
      Ordered: false,
    });
    expect((await t.portal.get(`/portal-api/webhooks/${id}`)).body).toMatchObject({ RateLimit: null, Ordered: false });
    for (const [body, message] of [
      [{ RateLimit: 0 }, 'RateLimit must be at least 1'],
      [{ RateLimit: 10001 }, 'RateLimit must be at most 10000'],
      [{ RateLimit: 2.5 }, 'RateLimit must be an integer number of deliveries per second'],
      [{ RateLimit: '5' }, 'RateLimit must be an integer number of deliveries per second'],
      [{ Ordered: 'yes' }, 'Ordered must be a boolean'],
      [{ Ordered: null }, 'Ordered must be a boolean'],
      [{ Active: null }, 'Active must be a boolean'],
    ] as [Record<string, unknown>, string][]) {
      const created = await t.portal.post('/portal-api/webhooks', { ...base, ...body });
      expect({ body, status: created.status, errors: created.body.errors }).toEqual({
        body,
        status: 422,
        errors: expect.arrayContaining([message]),
      });
      const updated = await t.portal.put(`/portal-api/webhooks/${id}`, body);
      expect({ body, status: updated.status, errors: updated.body.errors }).toEqual({
        body,
        status: 422,
        errors: expect.arrayContaining([message]),
      });
    }
    // created inactive: switched off by hand
    const off = await t.portal.post('/portal-api/webhooks', { ...base, Active: false });
    expect(off.body).toMatchObject({
      Active: false,
      DisabledReason: 'manual',
      DisabledAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
  });

  it('lists with page/per_page, updates with PUT and deletes', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await t.portal.post('/portal-api/webhooks', {
            Name: `L${i}`,
            URL: 'https://a.example.com',
            Events: ['AccessRequestCreated'],
          })
        ).body.ID,
      );
    const all = (await t.portal.get('/portal-api/webhooks?per_page=100')).body as { ID: string }[];
    expect(all.map((w) => w.ID)).toEqual(expect.arrayContaining(ids));
    const page = await t.portal.get('/portal-api/webhooks?page=2&per_page=2');
    expect(page.status).toBe(200);
    expect(page.body).toHaveLength(Math.min(2, all.length - 2));
    expect((await t.portal.get('/portal-api/webhooks?per_page=101')).status).toBe(422);

    const put = await t.portal.put(`/portal-api/webhooks/${ids[0]}`, {
      Name: 'Renamed',
      Method: 'PUT',
      Timeout: 5,
      Active: false,
      Events: ['AccessRequestRejected'],
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      ID: ids[0],
      Name: 'Renamed',
      Method: 'PUT',
      Timeout: 5,
      Active: false,
      Events: ['AccessRequestRejected'],
      URL: 'https://a.example.com',
    });
    expect((await t.portal.put(`/portal-api/webhooks/${ids[0]}`, { Timeout: 99 })).status).toBe(422);

    const del = await t.portal.delete(`/portal-api/webhooks/${ids[1]}`);
    expect(del.status).toBe(200);
    expect((await t.portal.get(`/portal-api/webhooks/${ids[1]}`)).status).toBe(404);
  });

  it('manages headers as a sub-resource', async () => {
    const { ID: id } = await createWebhook(t.portal, {
      URL: 'https://a.example.com',
      Events: ['AccessRequestCreated'],
    });
    const created = await t.portal.post(`/portal-api/webhooks/${id}/headers`, {
      Name: 'Authorization',
      Value: 'Bearer abc',
    });
    expect(created.status).toBe(201);
    // a header's own routes name the webhook it belongs to (WebhookID), as the portal's header routes do
    expect(created.body).toEqual({
      ID: expect.stringMatching(UUID),
      Name: 'Authorization',
      Value: 'Bearer abc',
      WebhookID: id,
    });
    const hid = created.body.ID;
    expect((await t.portal.get(`/portal-api/webhooks/${id}/headers`)).body).toEqual([created.body]);
    expect((await t.portal.get(`/portal-api/webhooks/${id}/headers/${hid}`)).body).toEqual(created.body);
    const updated = await t.portal.put(`/portal-api/webhooks/${id}/headers/${hid}`, { Name: 'X-Token', Value: 'v2' });
    expect(updated.body).toEqual({ ID: hid, Name: 'X-Token', Value: 'v2', WebhookID: id });
    expect((await t.portal.get(`/portal-api/webhooks/${id}`)).body.Headers).toEqual([
      { ID: hid, Name: 'X-Token', Value: 'v2' },
    ]);
    expect((await t.portal.post(`/portal-api/webhooks/${id}/headers`, { Name: 'bad name', Value: 'x' })).status).toBe(
      422,
    );
    expect((await t.portal.delete(`/portal-api/webhooks/${id}/headers/${hid}`)).status).toBe(200);
    expect((await t.portal.get(`/portal-api/webhooks/${id}/headers/${hid}`)).status).toBe(404);
  });

  it('answers a PUT that waited for a racing header change with the headers as that change left them', async () => {
    const { ID: id } = await createWebhook(t.portal, {
      URL: 'https://a.example.com',
      Events: ['AccessRequestCreated'],
      Headers: [{ Name: 'X-First', Value: '1' }],
    });
    const waiting = () => sessionsWaitingForLocks(t.db);
    // the webhook is held, so the header POST waits for it, and the PUT behind the POST
    const holder = new Client({ connectionString: t.env.databaseUrl });
    await holder.connect();
    let added, updated;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE`, [id]);
      const adding = t.portal.post(`/portal-api/webhooks/${id}/headers`, { Name: 'X-Second', Value: '2' });
      await eventually(async () => (await waiting()) === 1, 10_000, 'the header POST to wait for the webhook');
      const updating = t.portal.put(`/portal-api/webhooks/${id}`, { Timeout: 7 });
      await eventually(async () => (await waiting()) === 2, 10_000, 'the PUT to wait for the webhook');
      await holder.query('COMMIT');
      [added, updated] = await Promise.all([adding, updating]);
    } finally {
      await holder.end();
    }
    expect(added.status).toBe(201);
    expect(updated.status).toBe(200);
    // the PUT committed after the header: its answer shows it, as every read does from then on
    const now = (await t.portal.get(`/portal-api/webhooks/${id}`)).body.Headers;
    expect(now.map((h: { Name: string }) => h.Name)).toEqual(['X-First', 'X-Second']);
    expect(updated.body.Headers).toEqual(now);
    expect(updated.body.Timeout).toBe(7);
  });

  it('answers 404 in the portal body for unknown or malformed ids', async () => {
    for (const path of [
      '/portal-api/webhooks/00000000-0000-4000-8000-000000000000',
      '/portal-api/webhooks/not-a-uuid',
      '/portal-api/webhooks/42/secret',
      '/portal-api/webhooks/x/deliveries',
    ]) {
      const res = await t.portal.get(path);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body).toEqual({ status: 'error', errors: [expect.any(String)] });
    }
  });

  it("does not open to another family's credential", async () => {
    const res = await t.http.get('/portal-api/webhooks', { 'admin-auth': TEST_SECRETS.ADMIN_SECRET });
    expect(res.status).toBe(401);
  });
});
