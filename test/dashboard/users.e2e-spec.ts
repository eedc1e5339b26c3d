import { MAX_API_MODEL_BYTES } from '../../src/dashboard/users/dto/create-user.dto';
import { useService } from '../helpers/use-service';
import { ADMIN, bearer, seedUser, SeededUser } from '../helpers/dashboard';
import { TEST_SECRETS } from '../helpers/test-env';

const HEX24 = /^[0-9a-f]{24}$/;
const HEX32 = /^[0-9a-f]{32}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ZERO = '0001-01-01T00:00:00Z';

/** A user body for POST /api/users with `more` fields (user_permissions...) on top. */
const userBody = (email: string, more: Record<string, unknown> = {}) => ({
  email_address: email,
  first_name: 'Test',
  last_name: 'User',
  ...more,
});

describe('dashboard users', () => {
  const t = useService();
  let admin: SeededUser;

  beforeAll(async () => {
    admin = await seedUser(t, { org: 'org1' });
  });

  describe('POST /admin/users', () => {
    it('bootstraps from nothing: admin secret → user with access key → dashboard routes', async () => {
      const created = await t.http.post(
        '/admin/users',
        { email_address: 'root@example.com', first_name: 'Root', last_name: 'Admin', active: true },
        ADMIN,
      );
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        Status: 'OK',
        Message: expect.stringMatching(HEX32),
        Meta: expect.any(Object),
        ID: expect.stringMatching(HEX24),
      });
      const key = created.body.Message;
      const apis = await t.http.get('/api/apis', bearer(key));
      expect(apis.status).toBe(200);
      expect(apis.body).toEqual({ apis: expect.any(Array), pages: expect.any(Number) });
      // an empty org_id with IsAdmin is a super user: it sees org1's users too
      const users = await t.http.get('/api/users', bearer(key));
      expect(users.body.users.map((u: any) => u.id)).toContain(admin.id);
    });

    it('returns the user of 2.5 with every default applied', async () => {
      const res = await t.http.post(
        '/admin/users',
        { email_address: 'defaults@example.com', first_name: 'Dee', last_name: 'Fault' },
        ADMIN,
      );
      expect(res.status).toBe(200);
      const meta = res.body.Meta;
      expect(meta).toEqual({
        id: res.body.ID,
        email_address: 'defaults@example.com',
        first_name: 'Dee',
        last_name: 'Fault',
        user_permissions: { IsAdmin: 'admin', ResetPassword: 'admin' },
        access_key: res.body.Message,
        active: false,
        api_model: {},
        created_at: expect.stringMatching(RFC3339),
        group_id: '',
        last_login_date: ZERO,
        org_id: '',
        password_max_days: 0,
        password_updated: ZERO,
      });
      expect(meta.created_at).not.toBe(ZERO);
      expect(Math.abs(Date.parse(meta.created_at) - Date.now())).toBeLessThan(60_000);
      // active defaults to false: the key does not open the dashboard
      expect((await t.http.get('/api/users', bearer(res.body.Message))).status).toBe(401);
    });

    it('keeps the given org, permissions and fields, and stores a password only as a scrypt hash', async () => {
      const given = {
        org_id: 'org9',
        active: true,
        user_permissions: { apis: 'read' },
        group_id: 'g1',
        api_model: { a: 1 },
        password_max_days: 30,
      };
      const res = await t.http.post(
        '/admin/users',
        { ...userBody('given@example.com'), ...given, password: 'hunter2hunter2' },
        ADMIN,
      );
      expect(res.status).toBe(200);
      expect(res.body.Meta).toMatchObject(given);
      expect(res.body.Meta.password_updated).toMatch(RFC3339);
      expect(res.body.Meta.password_updated).not.toBe(ZERO);
      expect(res.text).not.toContain('hunter2');
      expect(res.text).not.toContain('scrypt');
      const [row] = await t.db.query(
        `SELECT password_hash, access_key_hash, access_key_encrypted FROM dashboard_users WHERE id = $1`,
        [res.body.ID],
      );
      expect(row.password_hash).toMatch(/^scrypt\$/);
      expect(row.password_hash).not.toContain('hunter2');
      expect(row.access_key_encrypted).not.toContain(res.body.Message);
    });

    it('generates distinct ids and access keys', async () => {
      const a = await seedUser(t);
      const b = await seedUser(t);
      expect(a.id).not.toBe(b.id);
      expect(a.key).not.toBe(b.key);
      expect(a.key).toMatch(HEX32);
    });

    it('refuses a duplicate e-mail in the same organisation (any case) but not in another', async () => {
      const body = { email_address: 'twice@example.com', first_name: 'T', last_name: 'W', org_id: 'orgD' };
      expect((await t.http.post('/admin/users', body, ADMIN)).status).toBe(200);
      const dup = await t.http.post('/admin/users', { ...body, email_address: 'TWICE@example.com' }, ADMIN);
      expect(dup.status).toBe(409);
      // the admin API's own documented wording (the dashboard API's ends in `org.`)
      expect(dup.body).toEqual({ Status: 'Error', Message: 'User email already exists for this Org', Meta: null });
      expect((await t.http.post('/admin/users', { ...body, org_id: 'orgE' }, ADMIN)).status).toBe(200);
    });

    it('reports validation failures with every reason', async () => {
      const res = await t.http.post(
        '/admin/users',
        { email_address: 'nope', last_name: 3, user_permissions: { apis: 'all' } },
        ADMIN,
      );
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        Status: 'Error',
        Message:
          'User object validation failed. email_address must be an email address; first_name is required; last_name must be a string; user_permissions.apis must be one of read, write, deny',
        Meta: null,
      });
    });

    it('tells the first 20 reasons of many, then how many more, in an answer no larger than the body', async () => {
      const user_permissions = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`area${i}`, 'read']));
      const res = await t.http.post(
        '/admin/users',
        { email_address: 'many@example.com', first_name: 'M', last_name: 'R', user_permissions },
        ADMIN,
      );
      expect(res.status).toBe(400);
      const reasons = res.body.Message.replace(/^User object validation failed\. /, '').split('; ');
      expect(reasons).toHaveLength(21);
      expect(reasons[0]).toMatch(/^user_permissions\.area0 is not a permission area/);
      expect(reasons[20]).toBe('and 980 more error(s)');
      // one member more is refused before validation: class-transformer copies an object in time quadratic in its size
      const wider = await t.http.post(
        '/admin/users',
        {
          email_address: 'many@example.com',
          first_name: 'M',
          last_name: 'R',
          user_permissions: { ...user_permissions, x: 'read' },
        },
        ADMIN,
      );
      expect(wider.status).toBe(400);
      expect(wider.body.Message).toBe('User object validation failed. user_permissions has more than 1000 members');
    });

    it('refuses a blank name or one with control characters, and stores nothing', async () => {
      const res = await t.http.post(
        '/admin/users',
        { email_address: 'blank@example.com', first_name: ' \t', last_name: 'a\nb' },
        ADMIN,
      );
      expect(res.status).toBe(400);
      expect(res.body.Message).toBe(
        'User object validation failed. first_name must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029); last_name must not contain control characters (line breaks, tabs, U+0000-U+001F, U+007F-U+009F, U+2028, U+2029)',
      );
      const blank = await t.http.post(
        '/admin/users',
        { email_address: 'blank@example.com', first_name: '  ', last_name: 'B' },
        ADMIN,
      );
      expect(blank.body.Message).toBe(
        'User object validation failed. first_name must not be blank (only whitespace or invisible characters)',
      );
      const again = await t.http.post(
        '/admin/users',
        { email_address: 'blank@example.com', first_name: 'A', last_name: 'B' },
        ADMIN,
      );
      expect(again.status).toBe(200);
    });

    it('words a refusal of text that cannot be stored as every other user validation failure, on both routes', async () => {
      const failed = 'User object validation failed.';
      const creations = [
        { path: '/admin/users', credential: ADMIN, more: {} },
        { path: '/api/users', credential: bearer(admin.key), more: { user_permissions: { apis: 'read' } } },
      ];
      for (const { path, credential, more } of creations) {
        const refused = async (body: Record<string, unknown>) => {
          const res = await t.http.post(path, { ...userBody('nul@example.com'), ...more, ...body }, credential);
          return [path, res.status, res.body];
        };
        const body = (message: string) => [path, 400, { Status: 'Error', Message: message, Meta: null }];
        expect(await refused({ first_name: 'A\u0000' })).toEqual(
          body(`${failed} first_name must not contain NUL characters or unpaired UTF-16 surrogates`),
        );
        expect(await refused({ last_name: 'x\ud800' })).toEqual(
          body(`${failed} last_name must not contain NUL characters or unpaired UTF-16 surrogates`),
        );
        expect(await refused({ api_model: { 'k\u0000': 1 } })).toEqual(
          body(
            `${failed} api_model has a member name that must not contain NUL characters or unpaired UTF-16 surrogates`,
          ),
        );
      }
      // the portal's words stay its own
      const app = await t.http.post(
        '/portal-api/apps',
        { Name: 'A\u0000' },
        { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
      );
      expect(app.body).toEqual({
        status: 'error',
        errors: ['Name must not contain NUL characters or unpaired UTF-16 surrogates'],
      });
    });

    it('takes an api_model of up to 64 KiB as JSON, and refuses a larger one on both creation routes', async () => {
      // {"k":"…"} is 8 bytes around the value; é is two bytes in UTF-8
      const model = (bytes: number) => ({ k: 'é'.repeat((bytes - 8) / 2) });
      expect(Buffer.byteLength(JSON.stringify(model(MAX_API_MODEL_BYTES)))).toBe(MAX_API_MODEL_BYTES);
      const creations = [
        { path: '/admin/users', credential: ADMIN, more: { org_id: 'org1' } },
        { path: '/api/users', credential: bearer(admin.key), more: { user_permissions: { apis: 'read' } } },
      ];
      for (const [i, { path, credential, more }] of creations.entries()) {
        const create = (email: string, api_model: unknown) =>
          t.http.post(path, { ...userBody(email), ...more, api_model }, credential);
        const big = await create(`model-big-${i}@example.com`, model(MAX_API_MODEL_BYTES + 2));
        expect([path, big.status, big.body]).toEqual([
          path,
          400,
          {
            Status: 'Error',
            Message: `User object validation failed. api_model must take at most ${MAX_API_MODEL_BYTES} bytes as JSON`,
            Meta: null,
          },
        ]);
        const fits = await create(`model-fits-${i}@example.com`, model(MAX_API_MODEL_BYTES));
        expect([path, fits.status]).toEqual([path, 200]);
        const stored = (await t.http.get(`/api/users/${fits.body.ID}`, bearer(admin.key))).body.api_model;
        // (compared as one boolean: a failure would print 64 KiB of é)
        expect(JSON.stringify(stored) === JSON.stringify(model(MAX_API_MODEL_BYTES))).toBe(true);
      }
    });

    it('refuses permission areas named after built-in object members, and keeps such members of api_model', async () => {
      for (const [area, route, headers] of [
        ['constructor', '/admin/users', ADMIN],
        ['toString', '/admin/users', ADMIN],
        ['hasOwnProperty', '/api/users', bearer(admin.key)],
        ['valueOf', '/api/users', bearer(admin.key)],
      ] as const) {
        const res = await t.http.post(
          route,
          userBody(`${area}@example.com`, { user_permissions: { apis: 'read', [area]: 'read' } }),
          headers,
        );
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          Status: 'Error',
          Message: expect.stringContaining(`user_permissions.${area} is not a permission area`),
          Meta: null,
        });
      }
      const model = {
        constructor: 'c',
        toString: 't',
        nested: { constructor: { valueOf: 1 } },
        list: [{ constructor: 2 }],
      };
      const res = await t.http.post(
        '/admin/users',
        userBody('model@example.com', { api_model: model, user_permissions: { apis: 'read' }, org_id: 'org1' }),
        ADMIN,
      );
      expect(res.status).toBe(200);
      expect(res.body.Meta.api_model).toEqual(model);
      expect(res.body.Meta.user_permissions).toEqual({ apis: 'read' });
      expect((await t.http.get(`/api/users/${res.body.ID}`, bearer(admin.key))).body.api_model).toEqual(model);
    });

    it.each([
      ['a non-JSON body', '{"email_address": ', 400],
      ['a JSON array', '[]', 400],
      ['a JSON string', '"x"', 400],
    ])('answers %s with a 4xx in the dashboard body', async (_name, raw, status) => {
      const res = await t.http.send('POST', '/admin/users', { raw, headers: ADMIN });
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ Status: 'Error', Message: expect.any(String), Meta: null });
    });

    it('refuses a 5 MB body with 413', async () => {
      const res = await t.http.send('POST', '/admin/users', {
        raw: JSON.stringify({ first_name: 'x'.repeat(5 * 1024 * 1024) }),
        headers: ADMIN,
      });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ Status: 'Error', Message: 'request body too large', Meta: null });
    });
  });

  describe('POST /api/users', () => {
    it('creates a user in the caller’s organisation', async () => {
      const res = await admin.http.post('/api/users', {
        email_address: 'member@example.com',
        first_name: 'Mem',
        last_name: 'Ber',
        user_permissions: { apis: 'read', analytics: 'read' },
        org_id: 'elsewhere',
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        Status: 'OK',
        Message: 'User created',
        Meta: expect.stringMatching(HEX24),
        ID: res.body.Meta,
      });
      const got = await admin.http.get(`/api/users/${res.body.ID}`);
      expect(got.body).toMatchObject({
        id: res.body.ID,
        org_id: 'org1',
        active: false,
        user_permissions: { apis: 'read', analytics: 'read' },
      });
    });

    it('treats explicit nulls as absent', async () => {
      const res = await admin.http.post('/api/users', {
        email_address: 'nulls@example.com',
        first_name: 'Nu',
        last_name: 'Ll',
        user_permissions: null,
        password: null,
        active: null,
        api_model: null,
      });
      expect(res.status).toBe(400);
      expect(res.body.Message).toBe('User object validation failed. user_permissions is required');
      const ok = await admin.http.post('/api/users', {
        email_address: 'nulls@example.com',
        first_name: 'Nu',
        last_name: 'Ll',
        user_permissions: {},
        password: null,
        active: null,
        api_model: null,
        org_id: null,
      });
      expect(ok.status).toBe(200);
      expect((await admin.http.get(`/api/users/${ok.body.ID}`)).body).toMatchObject({
        active: false,
        api_model: {},
        org_id: 'org1',
        password_updated: ZERO,
      });
      const viaAdmin = await t.http.post(
        '/admin/users',
        { email_address: 'nulls@example.com', first_name: 'N', last_name: 'L', user_permissions: null, org_id: null },
        ADMIN,
      );
      expect(viaAdmin.body.Meta).toMatchObject({
        org_id: '',
        user_permissions: { IsAdmin: 'admin', ResetPassword: 'admin' },
      });
    });

    it('answers a non-JSON body with 400 and a 5 MB body with 413', async () => {
      const bad = await t.http.send('POST', '/api/users', { raw: '{"email_address":', headers: bearer(admin.key) });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ Status: 'Error', Message: 'request body is not valid JSON', Meta: null });
      const big = await t.http.send('POST', '/api/users', {
        raw: JSON.stringify({ first_name: 'x'.repeat(5 * 1024 * 1024) }),
        headers: bearer(admin.key),
      });
      expect(big.status).toBe(413);
      expect(big.body).toEqual({ Status: 'Error', Message: 'request body too large', Meta: null });
    });

    it('requires user_permissions and reports validation failures', async () => {
      const res = await admin.http.post('/api/users', userBody('x@example.com'));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        Status: 'Error',
        Message: 'User object validation failed. user_permissions is required',
        Meta: null,
      });
      const bad = await admin.http.post(
        '/api/users',
        userBody('x@example.com', { user_permissions: { nothing: 'read' } }),
      );
      expect(bad.status).toBe(400);
      expect(bad.body.Message).toMatch(
        /^User object validation failed\. user_permissions\.nothing is not a permission area/,
      );
    });

    it('refuses a duplicate e-mail in the organisation', async () => {
      const body = userBody('dupe@example.com', { user_permissions: {} });
      expect((await admin.http.post('/api/users', body)).status).toBe(200);
      const dup = await admin.http.post('/api/users', body);
      expect(dup.status).toBe(409);
      expect(dup.body).toEqual({ Status: 'Error', Message: 'User email already exists for this org.', Meta: null });
    });

    it('lets a non-admin grant only what it holds itself', async () => {
      const manager = await seedUser(t, { org: 'org1', permissions: { users: 'write', apis: 'read' } });
      const ok = await manager.http.post(
        '/api/users',
        userBody('ok@example.com', { user_permissions: { apis: 'read', users: 'read' } }),
      );
      expect(ok.status).toBe(200);
      const escalate = await manager.http.post(
        '/api/users',
        userBody('boss@example.com', { user_permissions: { IsAdmin: 'admin', apis: 'write' } }),
      );
      expect(escalate.status).toBe(403);
      expect(escalate.body).toEqual({
        Status: 'Error',
        Message: 'access denied: You cannot grant or remove permissions you do not hold (IsAdmin, apis:write)',
        Meta: null,
      });
      // and it cannot delete an administrator either
      const del = await manager.http.delete(`/api/users/${admin.id}`);
      expect(del.status).toBe(403);
    });
  });

  describe('GET /api/users, GET and DELETE /api/users/{id}', () => {
    const t2 = useService({ vars: { DASHBOARD_PAGE_SIZE: '3' } });
    let boss: SeededUser;
    beforeAll(async () => {
      boss = await seedUser(t2, { org: 'paged' });
    });

    it('pages the organisation’s users newest first', async () => {
      // boss + 6 more = 7 users in pages of 3
      const ids = [boss.id];
      for (let i = 0; i < 6; i++) ids.push((await seedUser(t2, { org: 'paged', permissions: { apis: 'read' } })).id);
      await seedUser(t2, { org: 'other' });
      const seen: string[] = [];
      for (const p of [1, 2, 3]) {
        const res = await boss.http.get(`/api/users?p=${p}`);
        expect(res.status).toBe(200);
        expect(res.body.pages).toBe(3);
        seen.push(...res.body.users.map((u: any) => u.id));
      }
      expect(seen).toEqual([...ids].reverse());
      expect((await boss.http.get('/api/users?p=4')).body).toEqual({ users: [], pages: 3 });
    });

    it('shows access keys only to the user itself and to administrators', async () => {
      const reader = await seedUser(t2, { org: 'paged', permissions: { users: 'read' } });
      const mine = await reader.http.get(`/api/users/${reader.id}`);
      expect(mine.body.access_key).toBe(reader.key);
      const theirs = await reader.http.get(`/api/users/${boss.id}`);
      expect(theirs.status).toBe(200);
      expect(theirs.body.access_key).toBe('');
      expect((await boss.http.get(`/api/users/${reader.id}`)).body.access_key).toBe(reader.key);
      const list = await reader.http.get('/api/users');
      for (const u of list.body.users) expect(u.access_key).toBe(u.id === reader.id ? reader.key : '');
    });

    it('returns the user field by field and never a password', async () => {
      const res = await boss.http.get(`/api/users/${boss.id}`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'access_key',
        'active',
        'api_model',
        'created_at',
        'email_address',
        'first_name',
        'group_id',
        'id',
        'last_login_date',
        'last_name',
        'org_id',
        'password_max_days',
        'password_updated',
        'user_permissions',
      ]);
      expect(res.body).toMatchObject({
        id: boss.id,
        org_id: 'paged',
        active: true,
        access_key: boss.key,
        last_login_date: ZERO,
      });
    });

    it('hides other organisations’ users behind 404', async () => {
      const stranger = await seedUser(t2, { org: 'other' });
      for (const id of [stranger.id, '0123456789abcdef01234567', 'not-an-id']) {
        const res = await boss.http.get(`/api/users/${id}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ Status: 'Error', Message: 'User not found', Meta: null });
        expect((await boss.http.delete(`/api/users/${id}`)).status).toBe(404);
      }
      expect((await stranger.http.get(`/api/users/${stranger.id}`)).status).toBe(200);
    });

    it('deletes a user, whose key stops working at once', async () => {
      const victim = await seedUser(t2, { org: 'paged', permissions: { apis: 'read' } });
      expect((await victim.http.get('/api/apis')).status).toBe(200);
      const res = await boss.http.delete(`/api/users/${victim.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ Status: 'OK', Message: 'User deleted', Meta: null });
      expect((await boss.http.get(`/api/users/${victim.id}`)).status).toBe(404);
      expect((await victim.http.get('/api/apis')).status).toBe(401);
    });

    it('tells one of many concurrent deletes of a user that it deleted it, the others 404', async () => {
      for (let round = 0; round < 3; round++) {
        const victim = await seedUser(t2, { org: 'paged', permissions: { apis: 'read' } });
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => boss.http.delete(`/api/users/${victim.id}`)),
        );
        expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
        for (const a of answers.filter((x) => x.status !== 200)) {
          expect(a.status).toBe(404);
          expect(a.body).toEqual({ Status: 'Error', Message: 'User not found', Meta: null });
        }
      }
    });

    it.each(['0', '-1', '-99999999999999999999'])('refuses p=%s with 400', async (p) => {
      const res = await boss.http.get(`/api/users?p=${p}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ Status: 'Error', Message: 'p must be 1 or more', Meta: null });
    });

    it('refuses p given twice with 400 saying so', async () => {
      const res = await boss.http.get('/api/users?p=1&p=2');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ Status: 'Error', Message: 'p is given more than once', Meta: null });
    });

    it.each(['abc', '1.5', '1e2', '%2B1', '+1', '01', '0x1', '%201', ''])(
      'refuses p=%s, not plain decimal digits, with 400',
      async (p) => {
        const res = await boss.http.get(`/api/users?p=${p}`);
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          Status: 'Error',
          Message: 'p must be a whole page number in plain decimal digits (1, 2, ...)',
          Meta: null,
        });
      },
    );

    it.each(['1000001', '99999999999999999999', '9'.repeat(400)])(
      'answers p=%s, past the end, with no users',
      async (p) => {
        const res = await boss.http.get(`/api/users?p=${p}`);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ users: [], pages: 3 });
      },
    );
  });
});
