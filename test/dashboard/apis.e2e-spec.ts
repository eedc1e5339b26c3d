import { useService } from '../helpers/use-service';
import { createApi, EXT, GATEWAY, oasDoc, seedUser, SeededUser } from '../helpers/dashboard';

const SCHEMES = {
  key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
  oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://idp.example/token', scopes: {} } } },
  jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  basic: { type: 'http', scheme: 'basic' },
};

const ids = (res: { body: any }) => res.body.apis.map((a: any) => a.api_definition.api_id);

describe('dashboard: GET /api/apis and /api/apis/groups', () => {
  const t = useService();
  let admin: SeededUser;
  let reader: SeededUser;
  let other: SeededUser;
  let superUser: SeededUser;

  beforeAll(async () => {
    admin = await seedUser(t, { org: 'org1' });
    reader = await seedUser(t, { org: 'org1', permissions: { apis: 'read' } });
    other = await seedUser(t, { org: 'org2', permissions: { apis: 'write' } });
    superUser = await seedUser(t, { org: '' });
  });

  describe('list entries', () => {
    it('projects a definition into the 2.7 entry field by field', async () => {
      const id = await createApi(
        t,
        oasDoc({
          id: 'entry-1',
          name: 'Payments',
          org: 'entry-org',
          categories: ['money'],
          schemes: { key: SCHEMES.key, oauth: SCHEMES.oauth },
          security: [{ oauth: [] }],
          ext: {
            upstream: { url: 'https://payments.internal/v1' },
            server: { listenPath: { value: '/payments/', strip: true } },
          },
        }),
      );
      const user = await seedUser(t, { org: 'entry-org', permissions: { apis: 'read' } });
      const res = await user.http.get('/api/apis');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        apis: [
          {
            api_definition: {
              api_id: id,
              name: 'Payments',
              org_id: 'entry-org',
              active: true,
              use_keyless: false,
              use_oauth2: true,
              auth: { auth_header_name: 'X-Api-Key' },
              definition: { key: 'x-api-version', location: 'header' },
              proxy: { listen_path: '/payments/', strip_listen_path: true, target_url: 'https://payments.internal/v1' },
              version_data: { not_versioned: true, versions: { Default: { name: 'Default' } } },
            },
          },
        ],
        pages: 1,
      });
      // members in the order of interface 2.7 (stored as json, not jsonb)
      expect(Object.keys(res.body.apis[0].api_definition)).toEqual([
        'api_id',
        'name',
        'org_id',
        'active',
        'use_keyless',
        'use_oauth2',
        'auth',
        'definition',
        'proxy',
        'version_data',
      ]);
    });

    it('reads a security scheme given as a $ref as the scheme it points at', async () => {
      const org = 'ref-scheme-org';
      const id = await createApi(
        t,
        oasDoc({
          org,
          schemes: { k: { $ref: '#/components/securitySchemes/j' }, j: SCHEMES.jwt },
          security: [{ k: [] }],
        }),
      );
      const user = await seedUser(t, { org, permissions: { apis: 'read' } });
      const entry = (await user.http.get('/api/apis')).body.apis[0].api_definition;
      expect(entry).toMatchObject({ api_id: id, use_keyless: false, use_oauth2: false });
      expect(ids(await user.http.get('/api/apis?auth_type=jwt'))).toEqual([id]);
      expect(ids(await user.http.get('/api/apis?auth_type=keyless'))).toEqual([]);
    });

    it('returns apis [] and pages 0 when there is nothing', async () => {
      const lonely = await seedUser(t, { org: 'empty-org', permissions: { apis: 'read' } });
      expect((await lonely.http.get('/api/apis')).body).toEqual({ apis: [], pages: 0 });
      expect((await lonely.http.get('/api/apis/groups')).body).toEqual({});
    });
  });

  describe('paging (page size 10)', () => {
    const pagingOf = async (n: number) => {
      const org = `paging-${n}`;
      const user = await seedUser(t, { org, permissions: { apis: 'read' } });
      const created: string[] = [];
      for (let i = 0; i < n; i++)
        created.push(await createApi(t, oasDoc({ org, name: `api ${String(i).padStart(2, '0')}` })));
      return { user, created };
    };

    it.each([
      [0, 0, [0]],
      [1, 1, [1]],
      [10, 1, [10]],
      [11, 2, [10, 1]],
    ])('%i items make %i page(s)', async (n, pages, sizes) => {
      const { user, created } = await pagingOf(n);
      const seen: string[] = [];
      for (let p = 1; p <= Math.max(pages, 1); p++) {
        const res = await user.http.get(`/api/apis?p=${p}`);
        expect(res.status).toBe(200);
        expect(res.body.pages).toBe(pages);
        expect(res.body.apis).toHaveLength(sizes[p - 1]);
        seen.push(...ids(res));
      }
      // default order: newest first
      expect(seen).toEqual([...created].reverse());
      // p 0 or negative: every item in one answer, pages counted as usual
      for (const negative of ['0', '-1', '-7', '-99999999999999999999', `-${'9'.repeat(400)}`]) {
        const all = await user.http.get(`/api/apis?p=${negative}`);
        expect(all.status).toBe(200);
        expect(all.body.pages).toBe(pages);
        expect(ids(all)).toEqual(seen);
      }
      // no p is page 1; a page past the end is empty
      expect(ids(await user.http.get('/api/apis'))).toEqual(seen.slice(0, 10));
      expect((await user.http.get(`/api/apis?p=${pages + 1}`)).body).toEqual({ apis: [], pages });
      // however far past it
      for (const far of ['1000001', '99999999999999999999', '9'.repeat(400)])
        expect((await user.http.get(`/api/apis?p=${far}`)).body).toEqual({ apis: [], pages });
    });

    it('counts pages from the same snapshot as the page while APIs are being added', async () => {
      const org = 'paging-snapshot';
      const user = await seedUser(t, { org, permissions: { apis: 'read' } });
      let adding = true;
      const writer = (async () => {
        try {
          for (let i = 0; i < 25; i++)
            await Promise.all([1, 2, 3].map(() => createApi(t, oasDoc({ org, name: `snap ${i}` }))));
        } finally {
          adding = false;
        }
      })();
      const answers: { listed: number; pages: number }[] = [];
      const reader = async () => {
        while (adding) {
          // every match at once: the page holds them all, so `pages` must be counted from exactly these
          const res = await user.http.get('/api/apis?p=0');
          expect(res.status).toBe(200);
          answers.push({ listed: res.body.apis.length, pages: res.body.pages });
        }
      };
      await Promise.all([writer, reader(), reader(), reader()]);
      expect(answers.length).toBeGreaterThan(20);
      expect(answers.filter((a) => a.pages !== Math.ceil(a.listed / 10))).toEqual([]);
    });

    describe('with DASHBOARD_PAGE_SIZE=4', () => {
      const t4 = useService({ vars: { DASHBOARD_PAGE_SIZE: '4' } });

      it('uses DASHBOARD_PAGE_SIZE', async () => {
        const user = await seedUser(t4, { org: 'p4' });
        for (let i = 0; i < 9; i++) await createApi(t4, oasDoc({ org: 'p4' }));
        const res = await user.http.get('/api/apis?p=3');
        expect(res.body.pages).toBe(3);
        expect(res.body.apis).toHaveLength(1);
      });
    });
  });

  describe('filters and sorting', () => {
    const org = 'filters';
    let user: SeededUser;
    const made: Record<string, string> = {};
    /** An API of the organisation, with `more` oasDoc options. */
    const api = (id: string, name: string, more: Parameters<typeof oasDoc>[0] = {}) =>
      createApi(t, oasDoc({ org, id, name, ...more }));
    /** The oasDoc options of an API secured by one of SCHEMES. */
    const securedBy = (scheme: keyof typeof SCHEMES) => ({
      schemes: { [scheme]: SCHEMES[scheme] },
      security: [{ [scheme]: [] }],
    });

    beforeAll(async () => {
      user = await seedUser(t, { org, permissions: { apis: 'read' } });
      made.keyless = await api('f-keyless', 'Zebra Open', { categories: ['animals', 'public'] });
      made.token = await api('f-token', 'alpha Keys', { categories: ['animals'], ...securedBy('key') });
      made.oauth = await api('f-oauth', 'Mango OAuth', securedBy('oauth'));
      made.jwt = await api('f-jwt', 'beta 100%_JWT', securedBy('jwt'));
      made.basic = await api('f-basic', 'Kiwi Basic', { categories: ['fruit'], ...securedBy('basic') });
      made.base = await api('f-base', 'Versioned', {
        ext: {
          info: {
            name: 'Versioned',
            orgId: org,
            versioning: { enabled: true, name: 'v1', versions: [{ name: 'v2', id: 'f-child' }] },
          },
        },
      });
      made.child = await api('f-child', 'Versioned v2');
    });

    it.each([
      ['auth_type=keyless', ['f-child', 'f-base', 'f-keyless']],
      ['auth_type=authToken', ['f-token']],
      ['auth_type=oauth', ['f-oauth']],
      ['auth_type=jwt', ['f-jwt']],
      ['auth_type=basic', ['f-basic']],
      ['category=animals', ['f-token', 'f-keyless']],
      ['category=fruit', ['f-basic']],
      ['category=none', []],
      ['category=fruit,animals', ['f-basic', 'f-token', 'f-keyless']],
      ['category=fruit,%20none,,', ['f-basic']],
      ['category=', ['f-child', 'f-base', 'f-basic', 'f-jwt', 'f-oauth', 'f-token', 'f-keyless']],
      ['auth_type=keyless,authToken', ['f-child', 'f-base', 'f-token', 'f-keyless']],
      ['auth_type=jwt,basic&category=fruit', ['f-basic']],
      ['auth_type=', ['f-child', 'f-base', 'f-basic', 'f-jwt', 'f-oauth', 'f-token', 'f-keyless']],
      ['q=ver', ['f-child', 'f-base']],
      ['q=ALPHA', ['f-token']],
      ['q=100%25_', ['f-jwt']],
      ['q=%25', ['f-jwt']],
      ['q=_', ['f-jwt']],
      ['base_apis=true', ['f-base', 'f-basic', 'f-jwt', 'f-oauth', 'f-token', 'f-keyless']],
      ['base_apis=1&q=versioned', ['f-base']],
      ['base_apis=false&q=versioned', ['f-child', 'f-base']],
      ['base_apis=0&q=versioned', ['f-child', 'f-base']],
      ['base_apis=FALSE&q=versioned', ['f-child', 'f-base']],
      ['base_apis=yes&q=versioned', ['f-base']],
      ['base_apis=&q=versioned', ['f-base']],
      ['base_apis&q=versioned', ['f-base']],
      ['api_type=rest&category=fruit', ['f-basic']],
      ['api_type=graphql', []],
      ['compressed=1&category=fruit', ['f-basic']],
      ['compressed=&category=fruit', ['f-basic']],
      ['sort=name', ['f-token', 'f-jwt', 'f-basic', 'f-oauth', 'f-base', 'f-child', 'f-keyless']],
      ['sort=-name', ['f-keyless', 'f-child', 'f-base', 'f-oauth', 'f-basic', 'f-jwt', 'f-token']],
      ['sort=created_at', ['f-keyless', 'f-token', 'f-oauth', 'f-jwt', 'f-basic', 'f-base', 'f-child']],
      ['sort=-created_at', ['f-child', 'f-base', 'f-basic', 'f-jwt', 'f-oauth', 'f-token', 'f-keyless']],
      ['auth_type=keyless&category=public&q=zeb&sort=name', ['f-keyless']],
    ])('%s', async (qs, expected) => {
      const res = await user.http.get(`/api/apis?${qs}`);
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(expected);
      expect(res.body.pages).toBe(expected.length ? 1 : 0);
    });

    it('finds a name by itself and by its other case, with letters whose case JavaScript folds otherwise', async () => {
      const o = 'fold';
      const folding = await seedUser(t, { org: o, permissions: { apis: 'read' } });
      await createApi(t, oasDoc({ org: o, id: 'fold-i', name: 'İstanbul Gateway' }));
      await createApi(t, oasDoc({ org: o, id: 'fold-sigma', name: 'ΟΔΟΣ' }));
      for (const [q, expected] of [
        ['İstanbul Gateway', ['fold-i']],
        ['istanbul', ['fold-i']],
        ['ΟΔΟΣ', ['fold-sigma']],
        ['οδοσ', ['fold-sigma']],
      ] as const) {
        const res = await folding.http.get(`/api/apis?q=${encodeURIComponent(q)}`);
        expect([q, ids(res)]).toEqual([q, expected]);
      }
    });

    it('sorts by updated_at after an update', async () => {
      const body = oasDoc();
      delete body[EXT];
      await t.http.patch(`/gateway/apis/oas/${made.token}`, body, GATEWAY);
      expect(ids(await user.http.get('/api/apis?sort=-updated_at'))[0]).toBe('f-token');
      expect(ids(await user.http.get('/api/apis?sort=updated_at')).at(-1)).toBe('f-token');
    });

    it('recomputes the child flag when the base stops listing a version, and when the base is deleted', async () => {
      const extra = await createApi(t, oasDoc({ org, id: 'f-child2', name: 'Second child' }));
      const base = await createApi(
        t,
        oasDoc({
          org,
          id: 'f-base2',
          name: 'Base two',
          ext: {
            info: {
              name: 'Base two',
              orgId: org,
              versioning: { enabled: true, versions: [{ name: 'v2', id: extra }] },
            },
          },
        }),
      );
      expect(ids(await user.http.get('/api/apis?base_apis=true&q=second'))).toEqual([]);
      await t.http.put(`/gateway/apis/oas/${base}`, oasDoc({ org, name: 'Base two' }), GATEWAY);
      expect(ids(await user.http.get('/api/apis?base_apis=true&q=second'))).toEqual([extra]);
      await t.http.put(
        `/gateway/apis/oas/${base}`,
        oasDoc({
          org,
          ext: {
            info: {
              name: 'Base two',
              orgId: org,
              versioning: { enabled: true, versions: [{ name: 'v2', id: extra }] },
            },
          },
        }),
        GATEWAY,
      );
      expect(ids(await user.http.get('/api/apis?base_apis=true&q=second'))).toEqual([]);
      await t.http.delete(`/gateway/apis/oas/${base}`, GATEWAY);
      expect(ids(await user.http.get('/api/apis?base_apis=true&q=second'))).toEqual([extra]);
      await t.http.delete(`/gateway/apis/oas/${extra}`, GATEWAY);
    });

    it('groups ids by category', async () => {
      const res = await user.http.get('/api/apis/groups');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ animals: ['f-keyless', 'f-token'], fruit: ['f-basic'], public: ['f-keyless'] });
    });

    it.each([
      ['api_type=soap', 'api_type must be one of the following values'],
      ['auth_type=magic', 'auth_type must be a comma-separated list of: keyless, authToken, oauth, jwt, basic'],
      ['auth_type=keyless,magic', 'auth_type must be a comma-separated list of'],
      ['auth_type=keyless&auth_type=jwt', 'auth_type is given more than once'],
      ['sort=size', 'sort must be one of the following values'],
      ['sort=-', 'sort must be one of the following values'],
      ['compressed=2', 'compressed must be 1 or empty'],
      ['compressed=true', 'compressed must be 1 or empty'],
      ['base_apis=1&base_apis=0', 'base_apis is given more than once'],
      ['p=abc', 'p must be a whole page number'],
      ['p=-1.5', 'p must be a whole page number'],
      ['p=1&p=2', 'p is given more than once'],
      // plain decimal digits only
      ...['1e2', '1E2', '%2B1', '+1', '01', '-01', '-0', '1.0', '0x1', '%201', '1%20', '', '-', '%EF%BC%91'].map(
        (p): [string, string] => [`p=${p}`, 'p must be a whole page number in plain decimal digits'],
      ),
      ['category=a&category=b', 'category is given more than once'],
      ['q=a&q=b&p=1&p=2', 'q is given more than once; p is given more than once'],
    ])('refuses %s with 400', async (qs, message) => {
      const res = await user.http.get(`/api/apis?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ Status: 'Error', Message: expect.stringContaining(message), Meta: null });
    });
  });

  describe('organisations', () => {
    it('shows each organisation only its own APIs and groups; a super user sees all', async () => {
      const a = await createApi(t, oasDoc({ org: 'org1', id: 'org1-api', categories: ['shared'] }));
      const b = await createApi(t, oasDoc({ org: 'org2', id: 'org2-api', categories: ['shared'] }));
      const mine = ids(await reader.http.get('/api/apis?category=shared'));
      expect(mine).toEqual([a]);
      expect(ids(await admin.http.get('/api/apis?category=shared'))).toEqual([a]);
      expect(ids(await other.http.get('/api/apis?category=shared'))).toEqual([b]);
      expect((await reader.http.get('/api/apis/groups')).body.shared).toEqual([a]);
      expect((await other.http.get('/api/apis/groups')).body.shared).toEqual([b]);
      expect(ids(await superUser.http.get('/api/apis?category=shared'))).toEqual([b, a]);
      expect((await superUser.http.get('/api/apis/groups')).body.shared).toEqual([a, b]);
    });
  });
});
