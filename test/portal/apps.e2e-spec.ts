import {
  accessRequestAnswer,
  anInteger,
  createAccessRequest,
  createApp,
  credentialCount,
  outboxRows,
  PORTAL_TIME,
} from '../helpers/portal';
import { useService } from '../helpers/use-service';

describe('portal applications', () => {
  const t = useService();

  it('creates an app and answers with the interface fields, AccessRequests [] while it has none', async () => {
    const res = await t.portal.post('/portal-api/apps', {
      Name: 'Weather app',
      Description: 'Reads the weather',
      RedirectURLs: 'https://app.example.com/callback',
      UserID: 7,
      Visibility: 'team',
    });
    // 200, as the portal product documents for creating an app
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ID: anInteger(),
      Name: 'Weather app',
      Description: 'Reads the weather',
      RedirectURLs: 'https://app.example.com/callback',
      UserID: 7,
      Visibility: 'team',
      CreatedAt: expect.stringMatching(PORTAL_TIME),
      AccessRequests: [],
    });
    const got = await t.portal.get(`/portal-api/apps/${res.body.ID}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('defaults Visibility to organisation, Description and RedirectURLs to "" and UserID to 0', async () => {
    const body = await createApp(t.portal, { Name: 'Bare app' });
    expect(body).toEqual({
      ID: anInteger(),
      Name: 'Bare app',
      Description: '',
      RedirectURLs: '',
      UserID: 0,
      Visibility: 'organisation',
      CreatedAt: expect.stringMatching(PORTAL_TIME),
      AccessRequests: [],
    });
  });

  it('records ApplicationRegistered with the app as Message in the outbox', async () => {
    const app = await createApp(t.portal, {
      Name: 'Evented app',
      Description: 'd',
      RedirectURLs: 'https://e.example/cb',
      UserID: 3,
      Visibility: 'personal',
    });
    const rows = await outboxRows(t, 'ApplicationRegistered', 'ID', app.ID);
    expect(rows).toHaveLength(1);
    const [{ created_at: createdAt }] = await t.db.query(`SELECT created_at FROM portal_apps WHERE id = $1`, [app.ID]);
    expect(rows[0].payload).toEqual({
      ID: app.ID,
      Name: 'Evented app',
      UserID: 3,
      CreatedAt: createdAt.toISOString(),
      Description: 'd',
      RedirectURLs: 'https://e.example/cb',
      Visibility: 'personal',
    });
    // the same instant as the response's minute-precision CreatedAt
    expect(rows[0].payload.CreatedAt.slice(0, 16).replace('T', ' ')).toBe(app.CreatedAt);
  });

  it('nests all its access requests in one inner array, Products as an array there', async () => {
    const app = await createApp(t.portal, { Name: 'Nesting app', UserID: 1 });
    const first = await createAccessRequest(t.portal, { AppID: app.ID, Products: ['a', 'b'] });
    const second = await createAccessRequest(t.portal, {
      AppID: app.ID,
      Products: ['c'],
      AuthType: 'oauth2.0',
      User: 'User#2',
    });
    const res = await t.portal.get(`/portal-api/apps/${app.ID}`);
    expect(res.status).toBe(200);
    expect(res.body.AccessRequests).toEqual([
      [
        accessRequestAnswer({ ID: first.ID, AppID: app.ID, Client: 'Nesting app', Products: ['a', 'b'] }),
        accessRequestAnswer({
          ID: second.ID,
          AppID: app.ID,
          Client: 'Nesting app',
          User: 'User#2',
          AuthType: 'oauth2.0',
          Products: ['c'],
        }),
      ],
    ]);
  });

  it('nests the credentials of an approved access request', async () => {
    const app = await createApp(t.portal, { Name: 'Approved app' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID, ProvisionImmediately: true });
    const res = await t.portal.get(`/portal-api/apps/${app.ID}`);
    expect(res.body.AccessRequests).toHaveLength(1);
    expect(res.body.AccessRequests[0]).toHaveLength(1);
    const nested = res.body.AccessRequests[0][0];
    expect(nested.Status).toBe('approved');
    expect(nested.Products).toEqual(['weather-api', 'maps-api']);
    expect(nested.Credentials).toEqual(ar.Credentials);
    expect(nested.Credentials).toHaveLength(1);
  });

  it('lists apps as a bare array, page and per_page choosing the slice', async () => {
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createApp(t.portal, { Name: `Listed ${i}` }));
    const all = await t.portal.get('/portal-api/apps?per_page=100');
    expect(all.status).toBe(200);
    expect(Array.isArray(all.body)).toBe(true);
    const ids = all.body.map((a: any) => a.ID);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const c of created) expect(all.body).toContainEqual(c);

    const page = await t.portal.get('/portal-api/apps?per_page=2&page=2');
    expect(page.status).toBe(200);
    expect(page.body.map((a: any) => a.ID)).toEqual(ids.slice(2, 4));
    expect((await t.portal.get('/portal-api/apps?page=1000')).body).toEqual([]);
  });

  it('takes limit as the row count only: the page still starts at (page - 1) × per_page', async () => {
    for (let i = 0; i < 5; i++) await createApp(t.portal, { Name: `Limited ${i}` });
    const ids = (await t.portal.get('/portal-api/apps?per_page=100')).body.map((a: any) => a.ID);
    expect((await t.portal.get('/portal-api/apps?limit=2')).body.map((a: any) => a.ID)).toEqual(ids.slice(0, 2));
    const second = await t.portal.get('/portal-api/apps?per_page=2&page=2&limit=1');
    expect(second.status).toBe(200);
    expect(second.body.map((a: any) => a.ID)).toEqual(ids.slice(2, 3));
    for (const q of ['limit=0', 'limit=101', 'limit=x', 'limit=01']) {
      const res = await t.portal.get(`/portal-api/apps?${q}`);
      expect([q, res.status, res.body]).toEqual([
        q,
        422,
        { status: 'error', errors: ['limit must be a whole number from 1 to 100, in plain decimal digits'] },
      ]);
    }
  });

  it('refuses bad paging with 422', async () => {
    // paging is plain decimal digits, as on the dashboard: Number() would read each of these as a page
    const notPlain = ['1e2', '%2B1', '01', '1.0', '%201', '0x1'].flatMap((v) => [`page=${v}`, `per_page=${v}`]);
    for (const q of [
      'per_page=101',
      'per_page=0',
      'page=0',
      'page=x',
      'page=99999999999999999999',
      'page=1&page=2',
      ...notPlain,
    ]) {
      const res = await t.portal.get(`/portal-api/apps?${q}`);
      expect([q, res.status]).toEqual([q, 422]);
      expect(res.body).toEqual({ status: 'error', errors: expect.any(Array) });
      expect(res.body.errors.length).toBeGreaterThan(0);
      // one reason, and a true one, whatever was sent
      expect(res.body.errors).toEqual([
        q === 'page=1&page=2'
          ? 'page is given more than once'
          : q.startsWith('per_page')
            ? 'per_page must be a whole number from 1 to 100, in plain decimal digits'
            : 'page must be a whole number from 1 to 1000000, in plain decimal digits',
      ]);
    }
  });

  it('updates the fields given and keeps the others; the new Name becomes the Client of its requests', async () => {
    const app = await createApp(t.portal, { Name: 'Old name', Description: 'keep me', UserID: 4, Visibility: 'team' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID });
    const res = await t.portal.put(`/portal-api/apps/${app.ID}`, {
      Name: 'New name',
      Visibility: 'personal',
      RedirectURLs: 'https://n.example/cb',
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ID: app.ID,
      Name: 'New name',
      Description: 'keep me',
      RedirectURLs: 'https://n.example/cb',
      UserID: 4,
      Visibility: 'personal',
      CreatedAt: app.CreatedAt,
      AccessRequests: [[expect.objectContaining({ ID: ar.ID, Client: 'New name' })]],
    });
    expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Client).toBe('New name');
  });

  it('deletes an app with its access requests and their credentials', async () => {
    const app = await createApp(t.portal, { Name: 'Doomed app' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID, ProvisionImmediately: true });
    expect(ar.Credentials).toHaveLength(1);

    const res = await t.portal.delete(`/portal-api/apps/${app.ID}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', message: 'Application deleted' });

    expect((await t.portal.get(`/portal-api/apps/${app.ID}`)).status).toBe(404);
    const gone = await t.portal.get(`/portal-api/access_requests/${ar.ID}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ status: 'error', errors: ['Access request not found'] });
    expect(await credentialCount(t, ar.ID)).toBe(0);
    expect((await t.portal.delete(`/portal-api/apps/${app.ID}`)).status).toBe(404);
  });

  it('documents every portal route with its request and response schemas in /docs-json', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const json = (op: any, status: string) => op.responses[status]?.content?.['application/json']?.schema;
    const routes: [string, string, string | null, string, unknown][] = [
      ['post', '/portal-api/apps', 'CreateAppDto', '200', ref('AppResponse')],
      ['get', '/portal-api/apps', null, '200', { type: 'array', items: ref('AppResponse') }],
      ['get', '/portal-api/apps/{id}', null, '200', ref('AppResponse')],
      ['put', '/portal-api/apps/{id}', 'UpdateAppDto', '200', ref('AppResponse')],
      ['delete', '/portal-api/apps/{id}', null, '200', ref('PortalDeleteResponse')],
      ['post', '/portal-api/access_requests', 'CreateAccessRequestDto', '201', ref('AccessRequestResponse')],
      ['get', '/portal-api/access_requests', null, '200', { type: 'array', items: ref('AccessRequestResponse') }],
      ['get', '/portal-api/access_requests/{access_request_id}', null, '200', ref('AccessRequestResponse')],
      ['put', '/portal-api/access_requests/{access_request_id}/approve', null, '200', ref('AccessRequestResponse')],
      ['put', '/portal-api/access_requests/{access_request_id}/reject', null, '200', ref('AccessRequestResponse')],
      [
        'patch',
        '/portal-api/access_requests/{access_request_id}',
        'UpdateAccessRequestStatusDto',
        '200',
        ref('AccessRequestResponse'),
      ],
      ['delete', '/portal-api/access_requests/{access_request_id}', null, '200', ref('PortalDeleteResponse')],
    ];
    for (const [method, path, body, status, schema] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op).toBeDefined();
      expect(op.tags).toEqual(['portal']);
      expect(op.security).toEqual([{ portal: [] }]);
      if (body) expect(op.requestBody.content['application/json'].schema).toEqual(ref(body));
      expect(json(op, status)).toEqual(schema);
      expect(json(op, '401')).toEqual(ref('PortalErrorBody'));
      if (/\{(id|access_request_id)\}/.test(path)) {
        // the access request's path parameter is named as the interface names it
        const name = path.includes('access_requests') ? 'access_request_id' : 'id';
        expect(op.parameters).toContainEqual(
          expect.objectContaining({ name, in: 'path', required: true, schema: { type: 'integer' } }),
        );
        expect(json(op, '404')).toEqual(ref('PortalErrorBody'));
      }
    }
    const app = doc.components.schemas.AppResponse;
    expect(app.properties.AccessRequests).toMatchObject({
      type: 'array',
      items: { type: 'array', items: ref('NestedAccessRequestResponse') },
    });
    expect(app.properties.ID).toMatchObject({ type: 'integer' });
    expect(doc.components.schemas.AccessRequestResponse.properties.Products).toMatchObject({ type: 'string' });
    expect(doc.components.schemas.NestedAccessRequestResponse.properties.Products).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    });
    expect(doc.components.schemas.AccessRequestResponse.properties.Credentials).toMatchObject({
      type: 'array',
      items: ref('CredentialResponse'),
    });
    expect(doc.paths['/portal-api/apps'].post.responses['201']).toBeUndefined();
    for (const shape of ['AccessRequestResponse', 'NestedAccessRequestResponse']) {
      expect(doc.components.schemas[shape].properties.ProductIDs).toMatchObject({
        type: 'array',
        items: { type: 'integer' },
      });
      expect(doc.components.schemas[shape].properties.PlanID).toMatchObject({ type: 'integer' });
      expect(doc.components.schemas[shape].properties.DeletedAt).toMatchObject({
        type: 'string',
        example: '1970-01-01 00:00',
      });
    }
    const create = doc.components.schemas.CreateAccessRequestDto;
    expect(create.properties.ProductIDs).toMatchObject({ type: 'array', items: { type: 'integer' } });
    expect(create.properties.PlanID).toMatchObject({ type: 'integer' });
    expect(create.required).not.toContain('ProductIDs');
    expect(create.required).not.toContain('PlanID');
  });

  describe('bad input', () => {
    it('requires Name and lists every reason at once', async () => {
      const res = await t.portal.post('/portal-api/apps', {
        Visibility: 'public',
        UserID: 'seven',
        RedirectURLs: 'not a url',
        Description: 5,
      });
      expect(res.status).toBe(422);
      expect(res.body.status).toBe('error');
      const errors: string[] = res.body.errors;
      for (const field of ['Name', 'Visibility', 'UserID', 'RedirectURLs', 'Description']) {
        expect(errors.some((e) => e.startsWith(field))).toBe(true);
      }
    });

    it.each([
      [{ Name: '' }, 'Name'],
      [{ Name: null }, 'Name'],
      [{ Name: 5 }, 'Name'],
      [{ Name: 'x', UserID: 1.5 }, 'UserID'],
      [{ Name: 'x', UserID: -1 }, 'UserID'],
      [{ Name: 'x', UserID: null }, 'UserID'],
      [{ Name: 'x', Visibility: 'everyone' }, 'Visibility'],
      [{ Name: 'x', RedirectURLs: 'https://ok.example/cb,/relative' }, 'RedirectURLs'],
      [{ Name: 'x', RedirectURLs: 'https://ok.example/cb#fragment' }, 'RedirectURLs'],
    ])('refuses %j with a 422 naming %s', async (body, field) => {
      const res = await t.portal.post('/portal-api/apps', body);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        status: 'error',
        errors: expect.arrayContaining([expect.stringMatching(new RegExp(`^${field}`))]),
      });
    });

    it('refuses RedirectURLs that are not redirect addresses, on create and on update, storing nothing', async () => {
      const app = await createApp(t.portal, { Name: 'Redirects', RedirectURLs: 'https://a.example/cb' });
      const [{ count: before }] = await t.db.query(`SELECT count(*)::int AS count FROM portal_apps`);
      for (const RedirectURLs of [
        'javascript:alert(1)',
        'file:///etc/passwd',
        'mailto:x@y',
        'data:text/html,<script>alert(1)</script>',
        'ab:c',
        'a\r\nb: c',
        'https://a.example/c\r\nb',
        ',',
        'https://a.example/cb,,',
        ' https://a.example/cb ',
        'https:a.example/cb',
        'https://a.example/cb, javascript:alert(1)',
      ]) {
        for (const res of [
          await t.portal.post('/portal-api/apps', { Name: 'r', RedirectURLs }),
          await t.portal.put(`/portal-api/apps/${app.ID}`, { RedirectURLs }),
        ]) {
          expect({ RedirectURLs, status: res.status }).toEqual({ RedirectURLs, status: 422 });
          expect(res.body.errors).toEqual([expect.stringMatching(/^RedirectURLs /)]);
        }
      }
      const [{ count: after }] = await t.db.query(`SELECT count(*)::int AS count FROM portal_apps`);
      expect(after).toBe(before);
      expect((await t.portal.get(`/portal-api/apps/${app.ID}`)).body.RedirectURLs).toBe('https://a.example/cb');
    });

    it("takes several addresses separated by commas, with spaces after them, and an app's own scheme", async () => {
      const RedirectURLs = 'https://a.example/cb, com.example.app:/oauth,http://localhost:8080/cb';
      expect((await createApp(t.portal, { Name: 'r', RedirectURLs })).RedirectURLs).toBe(RedirectURLs);
    });

    it('refuses a blank Name or one with control characters, on create and on update', async () => {
      const app = await createApp(t.portal, { Name: 'Visible' });
      const [{ count: before }] = await t.db.query(`SELECT count(*)::int AS count FROM portal_apps`);
      for (const Name of [' ', '\t', '\n', '\u200b', '\u3000\ufeff', 'a\u0007b', 'a\u009bb', 'tab\there']) {
        for (const res of [
          await t.portal.post('/portal-api/apps', { Name }),
          await t.portal.put(`/portal-api/apps/${app.ID}`, { Name }),
        ]) {
          expect({ Name, status: res.status }).toEqual({ Name, status: 422 });
          expect(res.body.errors).toEqual([
            expect.stringMatching(/^Name must not (be blank|contain control characters)/),
          ]);
        }
      }
      const [{ count: after }] = await t.db.query(`SELECT count(*)::int AS count FROM portal_apps`);
      expect(after).toBe(before);
      expect((await t.portal.get(`/portal-api/apps/${app.ID}`)).body.Name).toBe('Visible');
    });

    it('names each refusal of required text as the README does: empty, blank, or holding a control character', async () => {
      const hook = { URL: 'https://example.com/hooks', Events: ['AccessRequestApproved'] };
      const answers: [string, string[]][] = [];
      for (const Name of ['', ' ', 'a\nb']) {
        answers.push([Name, (await t.portal.post('/portal-api/apps', { Name })).body.errors]);
        answers.push([Name, (await t.portal.post('/portal-api/webhooks', { ...hook, Name })).body.errors]);
      }
      const blank = 'Name must not be blank (only whitespace or invisible characters)';
      const control =
        'Name must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)';
      expect(answers).toEqual([
        ['', ['Name should not be empty']],
        ['', ['Name is required']],
        [' ', [blank]],
        [' ', [blank]],
        ['a\nb', [control]],
        ['a\nb', [control]],
      ]);
    });

    it('validates updates the same way, refusing a null Name', async () => {
      const app = await createApp(t.portal, { Name: 'Valid' });
      for (const body of [{ Name: null }, { Name: '' }, { Visibility: 'x' }, { UserID: '1' }]) {
        const res = await t.portal.put(`/portal-api/apps/${app.ID}`, body);
        expect(res.status).toBe(422);
        expect(res.body.errors.length).toBeGreaterThan(0);
        for (const e of res.body.errors) expect(e).toMatch(new RegExp(`^${Object.keys(body)[0]} `));
      }
      expect((await t.portal.get(`/portal-api/apps/${app.ID}`)).body.Name).toBe('Valid');
    });

    it('answers 404 in the portal body for unknown ids and ids that are not integers', async () => {
      for (const id of ['424242', 'abc', '0', '-1', '1.5', '1e3', '99999999999', '2147483648']) {
        for (const res of [
          await t.portal.get(`/portal-api/apps/${id}`),
          await t.portal.put(`/portal-api/apps/${id}`, { Name: 'x' }),
          await t.portal.delete(`/portal-api/apps/${id}`),
        ]) {
          expect(res.status).toBe(404);
          expect(res.body).toEqual({ status: 'error', errors: ['Application not found'] });
        }
      }
    });

    it('needs the portal credential', async () => {
      const res = await t.http.get('/portal-api/apps');
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ status: 'error', errors: [expect.any(String)] });
    });
  });
});
