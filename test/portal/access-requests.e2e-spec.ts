import { sha256Hex } from '../../src/common/crypto/secret-box';
import {
  accessRequestAnswer,
  accessRequestBody,
  accessRequestTally,
  anInteger,
  createAccessRequest,
  createApp,
  credentialCount,
  outboxRows,
  PORTAL_TIME,
  PROVISIONED_WITH_DCR,
} from '../helpers/portal';
import { useService } from '../helpers/use-service';

const HEX64 = /^[0-9a-f]{64}$/;

describe('portal access requests', () => {
  // no DCR_REGISTRATION_ENDPOINT here: DCR has its own spec with a fake identity provider
  const t = useService({
    portalApp: { Name: 'Weather app', RedirectURLs: 'https://app.example.com/callback', UserID: 7 },
  });

  const countEvents = async (name: string, id: number) => (await outboxRows(t, name, 'ID', id)).length;

  it('drives the whole flow: create app → request access → approve → GET shows the credential', async () => {
    // every field given: Catalogue 'Public catalogue', Plan 'Free plan', Products weather-api and maps-api, authToken
    const created = await t.portal.post('/portal-api/access_requests', accessRequestBody({ AppID: t.portalApp.ID }));
    expect(created.status).toBe(201);
    expect(created.body).toEqual(
      accessRequestAnswer({
        ID: anInteger(),
        AppID: t.portalApp.ID,
        Client: 'Weather app',
        Products: 'weather-api, maps-api',
      }),
    );
    const id = created.body.ID;

    const approved = await t.portal.put(`/portal-api/access_requests/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual({
      ...created.body,
      Status: 'approved',
      UpdatedAt: expect.stringMatching(PORTAL_TIME),
      Credentials: [
        {
          AccessRequest: `AccessRequest#${id}`,
          Credential: expect.stringMatching(HEX64),
          CredentialHash: expect.stringMatching(HEX64),
          DCRRegistrationAccessToken: '',
          DCRRegistrationClientURI: '',
          DCRResponse: '',
          Expires: '1970-01-01 00:00',
          OAuthClientID: '',
          OAuthClientSecret: '',
          RedirectURI: '',
          ResponseType: '',
          Scope: '',
          TokenEndpoints: '',
        },
      ],
    });
    const [credential] = approved.body.Credentials;
    expect(credential.CredentialHash).toBe(sha256Hex(credential.Credential));

    const got = await t.portal.get(`/portal-api/access_requests/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(approved.body);

    const inApp = await t.portal.get(`/portal-api/apps/${t.portalApp.ID}`);
    expect(inApp.body.AccessRequests[0]).toContainEqual({ ...approved.body, Products: ['weather-api', 'maps-api'] });
  });

  it('stores ProductIDs and PlanID when given and shows them on every route, nested in the app too', async () => {
    const created = await t.portal.post(
      '/portal-api/access_requests',
      accessRequestBody({ AppID: t.portalApp.ID, Plan: 'Gold', ProductIDs: [11, 12], PlanID: 3 }),
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      Products: 'weather-api, maps-api',
      ProductIDs: [11, 12],
      PlanID: 3,
      DeletedAt: '1970-01-01 00:00',
    });
    const id = created.body.ID;
    const approved = await t.portal.put(`/portal-api/access_requests/${id}/approve`);
    expect(approved.body).toMatchObject({ Status: 'approved', ProductIDs: [11, 12], PlanID: 3 });
    expect(approved.body.Credentials[0].Expires).toBe('1970-01-01 00:00');
    expect((await t.portal.get(`/portal-api/access_requests/${id}`)).body).toMatchObject({
      ProductIDs: [11, 12],
      PlanID: 3,
    });
    const listed = (await t.portal.get('/portal-api/access_requests?per_page=100')).body.find((r: any) => r.ID === id);
    expect(listed).toMatchObject({ ProductIDs: [11, 12], PlanID: 3 });
    const nested = (await t.portal.get(`/portal-api/apps/${t.portalApp.ID}`)).body.AccessRequests[0].find(
      (r: any) => r.ID === id,
    );
    expect(nested).toMatchObject({
      Products: ['weather-api', 'maps-api'],
      ProductIDs: [11, 12],
      PlanID: 3,
      DeletedAt: '1970-01-01 00:00',
    });
    expect(nested.Credentials[0].Expires).toBe('1970-01-01 00:00');
    const [row] = await t.db.query(`SELECT product_ids, plan_id FROM portal_access_requests WHERE id = $1`, [id]);
    expect(row).toEqual({ product_ids: [11, 12], plan_id: 3 });
  });

  it('issues an OAuth client for oauth2.0: client id, secret, the app redirect address, scope per product', async () => {
    const ar = await createAccessRequest(t.portal, {
      AppID: t.portalApp.ID,
      AuthType: 'oauth2.0',
      Products: ['weather-api', 'maps-api'],
    });
    const res = await t.portal.patch(`/portal-api/access_requests/${ar.ID}`, { Status: 'approved' });
    expect(res.status).toBe(200);
    expect(res.body.Status).toBe('approved');
    expect(res.body.Credentials).toEqual([
      {
        AccessRequest: `AccessRequest#${ar.ID}`,
        Credential: '',
        CredentialHash: '',
        DCRRegistrationAccessToken: '',
        DCRRegistrationClientURI: '',
        DCRResponse: '',
        Expires: '1970-01-01 00:00',
        OAuthClientID: expect.stringMatching(/^[0-9a-f]{32}$/),
        OAuthClientSecret: expect.stringMatching(HEX64),
        RedirectURI: 'https://app.example.com/callback',
        ResponseType: 'code',
        Scope: 'weather-api maps-api',
        TokenEndpoints: 'client_secret_basic',
      },
    ]);
  });

  it('approves at once with ProvisionImmediately, emitting Created, Approved and CredentialRegistered', async () => {
    const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID, ProvisionImmediately: true });
    expect(ar.Status).toBe('approved');
    expect(ar.ProvisionImmediately).toBe(true);
    expect(ar.Credentials).toHaveLength(1);
    const names: { name: string }[] = await t.db.query(
      `SELECT name FROM outbox_events WHERE payload->>'ID' = $1 AND name LIKE 'AccessRequest%' OR payload->>'AccessRequestID' = $1 ORDER BY occurred_at`,
      [String(ar.ID)],
    );
    expect(names.map((r) => r.name)).toEqual(['AccessRequestCreated', 'AccessRequestApproved', 'CredentialRegistered']);
  });

  it('tells AccessRequestCreated the status the request was created with: approved with ProvisionImmediately', async () => {
    // a request provisioned at once is never pending, so a receiver must not be told it is awaiting approval
    const provisioned = await createAccessRequest(t.portal, { AppID: t.portalApp.ID, ProvisionImmediately: true });
    const waiting = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
    const createdStatus = async (id: number) =>
      (await outboxRows(t, 'AccessRequestCreated', 'ID', id)).map((r) => r.payload.Status);
    expect(await createdStatus(provisioned.ID)).toEqual(['approved']);
    expect(await createdStatus(waiting.ID)).toEqual(['pending']);
  });

  it('keeps credentials encrypted at rest: the raw row holds no secret in clear', async () => {
    const token = await createAccessRequest(t.portal, { AppID: t.portalApp.ID, ProvisionImmediately: true });
    const oauth = await createAccessRequest(t.portal, {
      AppID: t.portalApp.ID,
      AuthType: 'oauth2.0',
      ProvisionImmediately: true,
    });
    const key: string = token.Credentials[0].Credential;
    const clientSecret: string = oauth.Credentials[0].OAuthClientSecret;
    const rows: {
      row: string;
      credential_hash: string | null;
      credential_encrypted: string | null;
      oauth_client_secret_encrypted: string | null;
    }[] = await t.db.query(
      `SELECT row_to_json(c)::text AS row, credential_hash, credential_encrypted, oauth_client_secret_encrypted
           FROM portal_credentials c WHERE access_request_id = ANY($1) ORDER BY id`,
      [[token.ID, oauth.ID]],
    );
    expect(rows).toHaveLength(2);
    const everything = rows.map((r) => r.row).join('\n');
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(clientSecret);
    expect(rows[0].credential_hash).toBe(sha256Hex(key));
    expect(rows[0].credential_encrypted).toMatch(/^v1:/);
    expect(rows[1].oauth_client_secret_encrypted).toMatch(/^v1:/);
  });

  describe('state machine', () => {
    it('approving an approved request again is a 200 that changes nothing and emits nothing', async () => {
      const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
      const first = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
      expect(first.status).toBe(200);
      const again = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const patched = await t.portal.patch(`/portal-api/access_requests/${ar.ID}`, { Status: 'approved' });
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual(first.body);
      expect(await countEvents('AccessRequestApproved', ar.ID)).toBe(1);
      expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(1);
    });

    it('rejects a pending request; rejecting again changes nothing; approving it then is a 409', async () => {
      const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
      const rejected = await t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`);
      expect(rejected.status).toBe(200);
      expect(rejected.body).toEqual({ ...ar, Status: 'rejected', UpdatedAt: expect.stringMatching(PORTAL_TIME) });
      const again = await t.portal.patch(`/portal-api/access_requests/${ar.ID}`, { Status: 'rejected' });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(rejected.body);
      expect(await countEvents('AccessRequestRejected', ar.ID)).toBe(1);

      for (const res of [
        await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`),
        await t.portal.patch(`/portal-api/access_requests/${ar.ID}`, { Status: 'approved' }),
      ]) {
        expect(res.status).toBe(409);
        expect(res.body).toEqual({
          status: 'error',
          errors: ['access request is rejected and cannot become approved'],
        });
      }
      expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body).toEqual(rejected.body);
      expect(await countEvents('AccessRequestApproved', ar.ID)).toBe(0);
    });

    it('rejecting an approved request revokes its credentials (kept with revoked_at, no longer shown)', async () => {
      const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID, ProvisionImmediately: true });
      expect(ar.Credentials).toHaveLength(1);
      const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`);
      expect(res.status).toBe(200);
      expect(res.body.Status).toBe('rejected');
      expect(res.body.Credentials).toEqual([]);
      expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Credentials).toEqual([]);
      const rows: { revoked_at: Date | null }[] = await t.db.query(
        `SELECT revoked_at FROM portal_credentials WHERE access_request_id = $1`,
        [ar.ID],
      );
      expect(rows).toEqual([{ revoked_at: expect.any(Date) }]);
      const events = await outboxRows(t, 'AccessRequestRejected', 'ID', ar.ID);
      expect(events).toHaveLength(1);
      expect(events[0].payload.Status).toBe('rejected');
    });

    it('two approvals at once make exactly one transition and one AccessRequestApproved event', async () => {
      for (let round = 0; round < 5; round++) {
        const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
        const results = await Promise.all([
          t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`),
          t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`),
          t.portal.patch(`/portal-api/access_requests/${ar.ID}`, { Status: 'approved' }),
        ]);
        expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
        for (const r of results) expect(r.body.Status).toBe('approved');
        // every answer shows the one credential that was issued
        expect(new Set(results.map((r) => r.body.Credentials[0].Credential)).size).toBe(1);
        expect(await countEvents('AccessRequestApproved', ar.ID)).toBe(1);
        expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(1);
        expect(await credentialCount(t, ar.ID)).toBe(1);
      }
    });

    it('DCREnabled without an identity provider configured: approval fails with 502 and nothing changes', async () => {
      const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID, AuthType: 'oauth2.0', DCREnabled: true });
      const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        status: 'error',
        errors: [
          'dynamic client registration is not configured: set DCR_REGISTRATION_ENDPOINT to the identity provider registration endpoint',
        ],
      });
      expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body).toEqual(ar);
      expect(await countEvents('AccessRequestApproved', ar.ID)).toBe(0);
      expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(0);
      // rejecting it still works
      expect((await t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`)).status).toBe(200);
    });

    it('ProvisionImmediately with DCR and no identity provider creates nothing at all', async () => {
      const before = await accessRequestTally(t, 'AccessRequestCreated');
      const res = await t.portal.post(
        '/portal-api/access_requests',
        accessRequestBody({ AppID: t.portalApp.ID, ...PROVISIONED_WITH_DCR }),
      );
      expect(res.status).toBe(502);
      expect(await accessRequestTally(t, 'AccessRequestCreated')).toEqual(before);
    });
  });

  describe('listing', () => {
    it('lists bare arrays filtered by status, page and per_page choosing the slice', async () => {
      const other = await createApp(t.portal, { Name: 'Listing app' });
      const a = await createAccessRequest(t.portal, { AppID: other.ID });
      const b = await createAccessRequest(t.portal, { AppID: other.ID, ProvisionImmediately: true });
      const c = await createAccessRequest(t.portal, { AppID: other.ID });
      await t.portal.put(`/portal-api/access_requests/${c.ID}/reject`);

      const all = await t.portal.get('/portal-api/access_requests?per_page=100');
      expect(all.status).toBe(200);
      expect(Array.isArray(all.body)).toBe(true);
      const ids = all.body.map((r: any) => r.ID);
      expect(ids).toEqual([...ids].sort((x, y) => x - y));
      expect(all.body).toContainEqual(a);
      expect(all.body).toContainEqual(b);
      for (const item of all.body) expect(typeof item.Products).toBe('string');

      for (const status of ['pending', 'approved', 'rejected']) {
        const res = await t.portal.get(`/portal-api/access_requests?status=${status}&per_page=100`);
        expect(res.status).toBe(200);
        expect(res.body.length).toBeGreaterThan(0);
        for (const item of res.body) expect(item.Status).toBe(status);
      }
      const approvedIds = (await t.portal.get('/portal-api/access_requests?status=approved&per_page=100')).body.map(
        (r: any) => r.ID,
      );
      expect(approvedIds).toContain(b.ID);
      expect(approvedIds).not.toContain(a.ID);

      const page = await t.portal.get('/portal-api/access_requests?per_page=2&page=2');
      expect(page.body.map((r: any) => r.ID)).toEqual(ids.slice(2, 4));
      expect((await t.portal.get('/portal-api/access_requests')).body).toHaveLength(Math.min(20, ids.length));
    });

    it('refuses a bad status filter or paging with 422', async () => {
      for (const [q, field] of [
        ['status=done', 'status'],
        ['per_page=101', 'per_page'],
        ['page=0', 'page'],
        ['page=two', 'page'],
      ]) {
        const res = await t.portal.get(`/portal-api/access_requests?${q}`);
        expect(res.status).toBe(422);
        expect(res.body.status).toBe('error');
        for (const e of res.body.errors) expect(e).toMatch(new RegExp(`^${field} `));
      }
    });
  });

  it('deletes an access request with its credentials', async () => {
    const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID, ProvisionImmediately: true });
    const res = await t.portal.delete(`/portal-api/access_requests/${ar.ID}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', message: 'Access request deleted' });
    expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).status).toBe(404);
    expect(await credentialCount(t, ar.ID)).toBe(0);
    expect((await t.portal.delete(`/portal-api/access_requests/${ar.ID}`)).status).toBe(404);
    expect(
      (await t.portal.get(`/portal-api/apps/${t.portalApp.ID}`)).body.AccessRequests[0].map((r: any) => r.ID),
    ).not.toContain(ar.ID);
  });

  describe('bad input', () => {
    it('validates every field and lists every reason', async () => {
      const res = await t.portal.post('/portal-api/access_requests', {});
      expect(res.status).toBe(422);
      expect(res.body.status).toBe('error');
      for (const field of ['AppID', 'Catalogue', 'Plan', 'Products', 'AuthType', 'User']) {
        expect(res.body.errors.some((e: string) => e.startsWith(`${field} `))).toBe(true);
      }
    });

    it.each([
      [{ AppID: '1' }, 'AppID'],
      [{ AppID: 1.5 }, 'AppID'],
      [{ AppID: 0 }, 'AppID'],
      [{ Catalogue: 5 }, 'Catalogue'],
      [{ Plan: '' }, 'Plan'],
      [{ Products: 'weather-api' }, 'Products'],
      [{ Products: [] }, 'Products'],
      [{ Products: ['ok', 7] }, 'Products'],
      [{ AuthType: 'basic' }, 'AuthType'],
      [{ DCREnabled: 'yes' }, 'DCREnabled'],
      [{ DCREnabled: null }, 'DCREnabled'],
      [{ ProvisionImmediately: 1 }, 'ProvisionImmediately'],
      [{ User: ['User#1'] }, 'User'],
      [{ ProductIDs: 5 }, 'ProductIDs'],
      [{ ProductIDs: ['5'] }, 'ProductIDs'],
      [{ ProductIDs: [1.5] }, 'ProductIDs'],
      [{ ProductIDs: [0] }, 'ProductIDs'],
      [{ ProductIDs: [2_147_483_648] }, 'ProductIDs'],
      [{ ProductIDs: null }, 'ProductIDs'],
      [{ ProductIDs: [1, null] }, 'ProductIDs'],
      [{ PlanID: '2' }, 'PlanID'],
      [{ PlanID: -1 }, 'PlanID'],
      [{ PlanID: 2.5 }, 'PlanID'],
      [{ PlanID: null }, 'PlanID'],
      [{ PlanID: [2] }, 'PlanID'],
    ])('refuses %j with a 422 naming %s', async (override, field) => {
      const body = {
        AppID: t.portalApp.ID,
        Catalogue: 'c',
        Plan: 'p',
        Products: ['x'],
        AuthType: 'authToken',
        User: 'User#1',
        ...override,
      };
      const res = await t.portal.post('/portal-api/access_requests', body);
      expect(res.status).toBe(422);
      expect(res.body.status).toBe('error');
      expect(res.body.errors.length).toBeGreaterThan(0);
      for (const e of res.body.errors) expect(e).toMatch(new RegExp(`^${field}`));
    });

    it('refuses a product name with a comma, which the joined Products string could not tell apart', async () => {
      const before = await accessRequestTally(t, 'AccessRequest%');
      for (const Products of [['a, b', 'c'], ['a,b'], ['ok', ','], ['trailing,']]) {
        const res = await t.portal.post(
          '/portal-api/access_requests',
          accessRequestBody({ AppID: t.portalApp.ID, Products }),
        );
        expect({ Products, status: res.status }).toEqual({ Products, status: 422 });
        expect(res.body.errors).toEqual([
          'Products: each value in Products must not contain a comma (the names are shown joined by ", ")',
        ]);
      }
      expect(await accessRequestTally(t, 'AccessRequest%')).toEqual(before);
    });

    it('refuses blank text and control characters in Catalogue, Plan, User and each of Products, creating nothing', async () => {
      const before = await accessRequestTally(t, 'AccessRequest%');
      for (const field of ['Catalogue', 'Plan', 'User', 'Products']) {
        for (const bad of [' ', '\t', '\n', '\u200b', '\u00a0\u200d', 'a\u0007b', 'a\u0085b', 'a\u007fb']) {
          const res = await t.portal.post(
            '/portal-api/access_requests',
            accessRequestBody({ AppID: t.portalApp.ID, [field]: field === 'Products' ? ['ok', bad] : bad }),
          );
          expect({ field, bad, status: res.status }).toEqual({ field, bad, status: 422 });
          expect(res.body.errors).toEqual([
            expect.stringMatching(
              new RegExp(`^${field}(: each value in Products)? must not (be blank|contain control)`),
            ),
          ]);
        }
      }
      expect(await accessRequestTally(t, 'AccessRequest%')).toEqual(before);
      // invisible characters inside visible text are text
      const ok = await createAccessRequest(t.portal, {
        AppID: t.portalApp.ID,
        Plan: 'Gold\u200dPlan',
        User: ' User#1 ',
      });
      expect(ok).toMatchObject({ Plan: 'Gold\u200dPlan', User: ' User#1 ' });
    });

    it('refuses an unknown AppID with 422', async () => {
      const res = await t.portal.post('/portal-api/access_requests', {
        AppID: 424242,
        Catalogue: 'c',
        Plan: 'p',
        Products: ['x'],
        AuthType: 'authToken',
        User: 'User#1',
      });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ status: 'error', errors: ['AppID: no application with ID 424242'] });
    });

    it('refuses DCREnabled for authToken requests', async () => {
      const res = await t.portal.post('/portal-api/access_requests', {
        AppID: t.portalApp.ID,
        Catalogue: 'c',
        Plan: 'p',
        Products: ['x'],
        AuthType: 'authToken',
        DCREnabled: true,
        User: 'User#1',
      });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        status: 'error',
        errors: ['DCREnabled: dynamic client registration needs AuthType oauth2.0'],
      });
    });

    it('PATCH takes only approved or rejected', async () => {
      const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
      for (const body of [{ Status: 'pending' }, { Status: 'APPROVED' }, {}, { Status: 1 }]) {
        const res = await t.portal.patch(`/portal-api/access_requests/${ar.ID}`, body);
        expect(res.status).toBe(422);
        expect(res.body).toEqual({ status: 'error', errors: [expect.stringMatching(/^Status /)] });
      }
      expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Status).toBe('pending');
    });

    it('answers 422, never 500, to bodies that are not JSON objects', async () => {
      const ar = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
      for (const raw of ['null', '[]', '"approved"', '5', 'true', '[{"AppID":1}]']) {
        for (const [method, path] of [
          ['POST', '/portal-api/apps'],
          ['PUT', `/portal-api/apps/${t.portalApp.ID}`],
          ['POST', '/portal-api/access_requests'],
          ['PATCH', `/portal-api/access_requests/${ar.ID}`],
        ]) {
          const res = await t.portal.send(method, path, { raw, headers: { 'content-type': 'application/json' } });
          // null too: it is not "no fields at all", which would let PUT answer 200 for a body it never read
          expect({ method, path, raw, status: res.status, body: res.body }).toEqual({
            method,
            path,
            raw,
            status: 422,
            body: { status: 'error', errors: ['body: Validation failed (object is expected)'] },
          });
        }
      }
      expect((await t.portal.get(`/portal-api/apps/${t.portalApp.ID}`)).body.Name).toBe('Weather app');
      expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Status).toBe('pending');
    });

    it('answers 404 in the portal body for unknown ids and ids that are not integers', async () => {
      for (const id of ['424242', 'abc', '0', '-3', '2.5', '99999999999', '2147483648']) {
        for (const res of [
          await t.portal.get(`/portal-api/access_requests/${id}`),
          await t.portal.put(`/portal-api/access_requests/${id}/approve`),
          await t.portal.put(`/portal-api/access_requests/${id}/reject`),
          await t.portal.patch(`/portal-api/access_requests/${id}`, { Status: 'approved' }),
          await t.portal.delete(`/portal-api/access_requests/${id}`),
        ]) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ status: 'error', errors: ['Access request not found'] });
        }
      }
    });

    it('needs the portal credential', async () => {
      for (const res of [
        await t.http.get('/portal-api/access_requests'),
        await t.http.put('/portal-api/access_requests/1/approve', undefined, { authorization: 'wrong-token-wrong' }),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ status: 'error', errors: [expect.any(String)] });
      }
    });
  });
});
