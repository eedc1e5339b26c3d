import { PERMISSION_AREAS } from '../../src/common/auth';
import { HttpResponse } from '../helpers/http-client';
import { useService } from '../helpers/use-service';
import { TEST_SECRETS } from '../helpers/test-env';
import { ADMIN, bearer, createApi, GATEWAY, oasDoc, seedUser, SeededUser } from '../helpers/dashboard';

const ORG = 'perm-org';
const OTHER = 'perm-other';
const CLIENT = 'perm-client';

interface Route {
  method: string;
  /** The path; routes that act on a user get a fresh one of ORG. */
  path: (target: string) => string;
  area: (typeof PERMISSION_AREAS)[number];
  level: 'read' | 'write';
  body?: () => unknown;
  /** What the right user of ORG sees. */
  ok: (res: HttpResponse, target: string) => void;
  /** What a user of OTHER holding the permission sees: never ORG's data. */
  otherOrg: (res: HttpResponse, target: string) => void;
}

let n = 0;
const newUser = () => ({
  email_address: `new${++n}@example.com`,
  first_name: 'N',
  last_name: 'U',
  user_permissions: { apis: 'read' },
});
const activityPath = `/api/activity/oauthid/${CLIENT}/1/3/2024/2/3/2024`;
const apiIds = (res: HttpResponse) => res.body.apis.map((a: any) => a.api_definition.api_id);

const ROUTES: Route[] = [
  {
    method: 'POST',
    path: () => '/api/users',
    area: 'users',
    level: 'write',
    body: newUser,
    ok: (res) =>
      expect(res.body).toEqual({ Status: 'OK', Message: 'User created', Meta: expect.any(String), ID: res.body.Meta }),
    otherOrg: (res) => expect(res.body).toMatchObject({ Status: 'OK' }),
  },
  {
    method: 'GET',
    path: () => '/api/users',
    area: 'users',
    level: 'read',
    ok: (res, target) => expect(res.body.users.map((u: any) => u.id)).toContain(target),
    otherOrg: (res) => expect(res.body.users.every((u: any) => u.org_id === OTHER)).toBe(true),
  },
  {
    method: 'GET',
    path: (target) => `/api/users/${target}`,
    area: 'users',
    level: 'read',
    ok: (res, target) => expect(res.body).toMatchObject({ id: target, org_id: ORG }),
    otherOrg: (res) => expect(res.body).toEqual({ Status: 'Error', Message: 'User not found', Meta: null }),
  },
  {
    method: 'DELETE',
    path: (target) => `/api/users/${target}`,
    area: 'users',
    level: 'write',
    ok: (res) => expect(res.body).toEqual({ Status: 'OK', Message: 'User deleted', Meta: null }),
    otherOrg: (res) => expect(res.body).toEqual({ Status: 'Error', Message: 'User not found', Meta: null }),
  },
  {
    method: 'GET',
    path: () => '/api/apis',
    area: 'apis',
    level: 'read',
    ok: (res) => expect(apiIds(res)).toEqual(['perm-api']),
    otherOrg: (res) => expect(apiIds(res)).toEqual(['perm-other-api']),
  },
  {
    method: 'GET',
    path: () => '/api/apis/groups',
    area: 'apis',
    level: 'read',
    ok: (res) => expect(res.body).toEqual({ secret: ['perm-api'] }),
    otherOrg: (res) => expect(res.body).toEqual({ open: ['perm-other-api'] }),
  },
  {
    method: 'GET',
    path: () => activityPath,
    area: 'analytics',
    level: 'read',
    ok: (res) => {
      expect(res.body).toMatchObject({ pages: 1, data: [{ hits: 1, id: { api_id: 'perm-api' } }] });
      expect(res.body.data).toHaveLength(1);
    },
    // both organisations have traffic of this client id: each sees only its own
    otherOrg: (res) => expect(res.body.data.map((r: any) => r.id.api_id)).toEqual(['perm-other-api']),
  },
];

const UNAUTHORISED = { Status: 'Error', Message: 'Not authorised', Meta: null };

describe('dashboard permissions: every route × every kind of caller', () => {
  const t = useService();
  const callers: Record<string, Record<string, string>> = {};
  const lacking: Record<string, SeededUser> = {};
  const readOnly: Record<string, SeededUser> = {};
  let right: SeededUser;
  let otherOrg: SeededUser;

  const everyAreaBut = (area: string) =>
    Object.fromEntries(PERMISSION_AREAS.filter((a) => a !== area).map((a) => [a, 'write']));
  const target = async () => (await seedUser(t, { org: ORG, permissions: { apis: 'read' } })).id;
  const call = (route: Route, headers: Record<string, string>, id: string) =>
    t.http.send(route.method, route.path(id), { body: route.body?.(), headers });

  beforeAll(async () => {
    right = await seedUser(t, { org: ORG, permissions: { users: 'write', apis: 'read', analytics: 'read' } });
    otherOrg = await seedUser(t, { org: OTHER, permissions: { users: 'write', apis: 'write', analytics: 'write' } });
    const inactive = await seedUser(t, { org: ORG, active: false });
    for (const area of ['users', 'apis', 'analytics']) {
      lacking[area] = await seedUser(t, { org: ORG, permissions: { ...everyAreaBut(area), [area]: 'deny' } });
      readOnly[area] = await seedUser(t, { org: ORG, permissions: { [area]: 'read' } });
    }
    Object.assign(callers, {
      'no credential': {},
      'a wrong access key': bearer('0123456789abcdef0123456789abcdef'),
      'a malformed Authorization': { authorization: 'Basic abc' },
      'the admin secret (Admin-Auth)': ADMIN,
      'the admin secret as a bearer token': bearer(TEST_SECRETS.ADMIN_SECRET),
      'the gateway secret': GATEWAY,
      'the portal token': { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
      'the portal token as a bearer token': bearer(TEST_SECRETS.PORTAL_API_TOKEN),
      'an inactive administrator': bearer(inactive.key),
    });
    await createApi(t, oasDoc({ id: 'perm-api', org: ORG, categories: ['secret'] }));
    await createApi(t, oasDoc({ id: 'perm-other-api', org: OTHER, categories: ['open'] }));
    const ingest = await t.http.post(
      '/gateway/analytics',
      [ORG, OTHER].map((org) => ({
        timestamp: '2024-03-01T12:00:00Z',
        org_id: org,
        api_id: org === ORG ? 'perm-api' : 'perm-other-api',
        path: '/',
        code: 200,
        latency: 1,
        upstream_latency: 1,
        request_time: 1,
        oauth_id: CLIENT,
      })),
      GATEWAY,
    );
    expect(ingest.status).toBe(200);
  });

  describe.each(ROUTES.map((r) => [`${r.method} ${r.path(':id')}`, r] as const))('%s', (_name, route) => {
    it('refuses callers without a valid, active access key with 401', async () => {
      const id = await target();
      for (const [who, headers] of Object.entries(callers)) {
        const res = await call(route, headers, id);
        expect([who, res.status]).toEqual([who, 401]);
        expect(res.body).toEqual(UNAUTHORISED);
      }
    });

    it(`refuses a user without ${route.area} with 403`, async () => {
      const id = await target();
      const res = await call(route, bearer(lacking[route.area].key), id);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        Status: 'Error',
        Message: `access denied: You do not have permission to access ${route.path(id)}`,
        Meta: null,
      });
    });

    it(`${route.level === 'write' ? 'refuses' : 'admits'} a user with ${route.area}:read`, async () => {
      const id = await target();
      const res = await call(route, bearer(readOnly[route.area].key), id);
      expect(res.status).toBe(route.level === 'write' ? 403 : 200);
    });

    it('never shows or changes another organisation’s data', async () => {
      const id = await target();
      const res = await call(route, bearer(otherOrg.key), id);
      expect(res.status).toBe(route.path(id).includes(id) ? 404 : 200);
      route.otherOrg(res, id);
      // the target is untouched
      expect((await right.http.get(`/api/users/${id}`)).status).toBe(200);
    });

    it('serves the right user', async () => {
      const id = await target();
      const res = await call(route, bearer(right.key), id);
      expect(res.status).toBe(200);
      route.ok(res, id);
    });
  });

  it('creates users of another organisation’s caller inside that organisation', async () => {
    const res = await otherOrg.http.post('/api/users', { ...newUser(), org_id: ORG });
    expect(res.status).toBe(200);
    const [row] = await t.db.query(`SELECT org_id FROM dashboard_users WHERE id = $1`, [res.body.ID]);
    expect(row.org_id).toBe(OTHER);
  });

  it('documents every route of this issue in a valid OpenAPI document', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const routes: [string, string][] = [
      ['/admin/users', 'post'],
      ['/api/users', 'post'],
      ['/api/users', 'get'],
      ['/api/users/{id}', 'get'],
      ['/api/users/{id}', 'delete'],
      ['/api/apis', 'get'],
      ['/api/apis/groups', 'get'],
      [
        '/api/activity/oauthid/{OAuthClientID}/{startDay}/{startMonth}/{startYear}/{EndDay}/{EndMonth}/{EndYear}',
        'get',
      ],
      ['/gateway/apis/oas', 'post'],
      ['/gateway/apis/oas', 'get'],
      ['/gateway/apis/oas/{apiID}', 'get'],
      ['/gateway/apis/oas/{apiID}', 'put'],
      ['/gateway/apis/oas/{apiID}', 'patch'],
      ['/gateway/apis/oas/{apiID}', 'delete'],
      ['/gateway/analytics', 'post'],
    ];
    for (const [path, method] of routes) {
      const op = doc.paths[path]?.[method];
      expect([path, method, Boolean(op)]).toEqual([path, method, true]);
      expect(op.responses['200']).toBeDefined();
      expect(op.security?.length).toBeGreaterThan(0);
    }
    expect(doc.paths['/api/apis'].get.parameters.map((p: any) => p.name).sort()).toEqual([
      'api_type',
      'auth_type',
      'base_apis',
      'category',
      'compressed',
      'p',
      'q',
      'sort',
    ]);
    const patch = doc.paths['/gateway/apis/oas/{apiID}'].patch.parameters.map((p: any) => p.name);
    expect(patch).toEqual(
      expect.arrayContaining([
        'apiID',
        'upstreamURL',
        'listenPath',
        'customDomain',
        'allowList',
        'validateRequest',
        'mockResponse',
        'authentication',
      ]),
    );
    const activity = doc.paths[routes[7][0]].get.parameters.map((p: any) => `${p.in}:${p.name}`).sort();
    expect(activity).toEqual([
      'path:EndDay',
      'path:EndMonth',
      'path:EndYear',
      'path:OAuthClientID',
      'path:startDay',
      'path:startMonth',
      'path:startYear',
      'query:p',
    ]);
  });

  describe('POST /admin/users', () => {
    it.each([
      ['no credential', {}],
      ['a wrong secret', { 'admin-auth': 'wrong-wrong-wrong-wrong' }],
      ['the gateway secret', GATEWAY],
      ['the gateway secret as Admin-Auth', { 'admin-auth': TEST_SECRETS.GATEWAY_SECRET }],
      ['the portal token', { authorization: TEST_SECRETS.PORTAL_API_TOKEN }],
      ['a dashboard access key', { authorization: 'Bearer 0123456789abcdef0123456789abcdef' }],
    ])('refuses %s with 401', async (_who, headers) => {
      const res = await t.http.post('/admin/users', newUser(), headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ Status: 'Error', Message: expect.any(String), Meta: null });
    });

    it('refuses a real dashboard administrator’s access key', async () => {
      const res = await t.http.post('/admin/users', newUser(), bearer(right.key));
      expect(res.status).toBe(401);
    });

    it('serves the admin secret', async () => {
      expect((await t.http.post('/admin/users', newUser(), ADMIN)).status).toBe(200);
    });
  });
});
