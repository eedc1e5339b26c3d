import { buildApiListQuery, ApiListFilters } from '../../src/dashboard/apis/api-list.query';
import type { ApiSort } from '../../src/dashboard/apis/dto/list-apis-query.dto';
import { useService } from '../helpers/use-service';
import { seedUser, SeededUser } from '../helpers/dashboard';

const TOTAL = 100_000;

/**
 * 100 000 stored definitions, inserted in one statement: every tenth belongs to another organisation,
 * every hundredth is a child version, categories cycle over 50 names and auth types over four.
 */
const SEED = `
  INSERT INTO api_definitions (id, org_id, name, api_type, categories, auth_types, child_ids, is_child, oas, list_entry, created_at, updated_at)
  SELECT 'scale-' || g,
         CASE WHEN g % 10 = 0 THEN 'scale-other' ELSE 'scale' END,
         'API ' || lpad(g::text, 6, '0'),
         'rest',
         ARRAY['cat' || (g % 50)],
         ARRAY[(ARRAY['keyless', 'authToken', 'oauth', 'jwt'])[1 + g % 4]],
         '{}',
         g % 100 = 1,
         json_build_object('openapi', '3.0.3', 'info', json_build_object('title', 'API ' || g, 'version', '1'), 'paths', '{}'::json),
         json_build_object('api_id', 'scale-' || g, 'name', 'API ' || lpad(g::text, 6, '0'),
                            'org_id', CASE WHEN g % 10 = 0 THEN 'scale-other' ELSE 'scale' END),
         timestamptz '2024-01-01T00:00:00Z' + g * interval '1 second',
         timestamptz '2024-06-01T00:00:00Z' - g * interval '1 second'
    FROM generate_series(1, ${TOTAL}) AS g`;

const ids = (res: { body: any }) => res.body.apis.map((a: any) => a.api_definition.api_id);
const scaleIds = (gs: number[]) => gs.map((g) => `scale-${g}`);
/** The g of the org 'scale' (g % 10 != 0) in descending order, starting below `from`. */
const descending = (from: number, count: number) => {
  const out: number[] = [];
  for (let g = from; out.length < count && g > 0; g--) if (g % 10 !== 0) out.push(g);
  return out;
};

describe('GET /api/apis with 100 000 stored definitions', () => {
  const t = useService();
  let user: SeededUser;

  beforeAll(async () => {
    user = await seedUser(t, { org: 'scale', permissions: { apis: 'read' } });
    await t.db.query(SEED);
    await t.db.query('VACUUM ANALYZE api_definitions');
  });

  it('pages the organisation’s 90 000 definitions, newest first', async () => {
    const first = await user.http.get('/api/apis');
    expect(first.status).toBe(200);
    expect(first.body.pages).toBe(9000);
    expect(ids(first)).toEqual(scaleIds(descending(TOTAL, 10)));
    const last = await user.http.get('/api/apis?p=9000');
    expect(ids(last)).toEqual(scaleIds([11, 9, 8, 7, 6, 5, 4, 3, 2, 1]));
    expect((await user.http.get('/api/apis?p=9001')).body).toEqual({ apis: [], pages: 9000 });
  });

  /** Page 2 of category cat7 by name, descending. */
  const CAT7_PAGE_2 = [99_457, 99_407, 99_357, 99_307, 99_257, 99_207, 99_157, 99_107, 99_057, 99_007];

  it.each<[string, string, number, number[]]>([
    [
      'q: a substring of the name, case-insensitive',
      'q=api%2000012&sort=name',
      1,
      [121, 122, 123, 124, 125, 126, 127, 128, 129],
    ],
    [
      'category cat7: g % 50 == 7 → 2 000 definitions, none in the other org',
      'category=cat7&sort=-name&p=2',
      200,
      CAT7_PAGE_2,
    ],
    ['children (g % 100 == 1) left out', 'base_apis=true&sort=created_at', 8900, [2, 3, 4, 5, 6, 7, 8, 9, 11, 12]],
    [
      'auth type oauth: g % 4 == 2, not in the other org (g % 10 == 0) → 25 000 − 5 000',
      'auth_type=oauth&sort=-updated_at',
      2000,
      [2, 6, 14, 18, 22, 26, 34, 38, 42, 46],
    ],
    [
      'two categories: an API in either matches (cat7 and cat8 are disjoint, 2 000 each)',
      'category=cat7,cat8&sort=-name',
      400,
      [99_958, 99_957, 99_908, 99_907, 99_858, 99_857, 99_808, 99_807, 99_758, 99_757],
    ],
  ])('filters, sorts and pages in SQL: %s', async (_what, query, pages, gs) => {
    const res = await user.http.get(`/api/apis?${query}`);
    expect(res.body.pages).toBe(pages);
    expect(ids(res)).toEqual(scaleIds(gs));
  });

  it('answers a negative page with every match, pages still counted in pages of 10', async () => {
    const all = await user.http.get('/api/apis?category=cat7&sort=-name&p=-1');
    expect(all.body.pages).toBe(200);
    expect(ids(all)).toHaveLength(2000);
    expect(ids(all).slice(10, 20)).toEqual(scaleIds(CAT7_PAGE_2));
  });

  it.each<[string, ApiListFilters, ApiSort]>([
    ['default', { orgId: 'scale' }, '-created_at'],
    ['by name', { orgId: 'scale' }, 'name'],
    ['by update, descending', { orgId: 'scale' }, '-updated_at'],
    ['name search', { orgId: 'scale', q: '0099' }, '-created_at'],
    ['category', { orgId: 'scale', categories: ['cat7'] }, 'name'],
    ['any of two categories', { orgId: 'scale', categories: ['cat7', 'cat8'] }, 'name'],
    ['base APIs only', { orgId: 'scale', baseOnly: true }, '-created_at'],
    ['super user', {}, '-created_at'],
  ])('plans the %s page query with an index, never a sequential scan', async (_name, filters, sort) => {
    const [text, params] = buildApiListQuery(filters, sort, 500, 10);
    const [
      {
        'QUERY PLAN': [{ Plan: plan }],
      },
    ] = await t.db.query(`EXPLAIN (FORMAT JSON) ${text}`, params);
    // the statement's second sub-plan is the page (the first counts every match, which may read the whole table)
    const page = JSON.stringify(plan.Plans.find((p: any) => /^InitPlan 2\b/.test(p['Subplan Name'])));
    expect(page).toMatch(/Index/);
    expect(page).not.toMatch(/Seq Scan/);
  });
});
