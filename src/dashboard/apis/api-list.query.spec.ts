import { buildApiListQuery, commaList, containsPattern } from './api-list.query';

describe('GET /api/apis query', () => {
  /** The one statement: the count of every match and the page, both filtered by `where`. */
  const statement = (where: string, order: string, window: string) =>
    `SELECT (SELECT count(*) FROM api_definitions${where})::int AS total,
            coalesce((SELECT json_agg(p.list_entry ORDER BY p.n) FROM (SELECT list_entry, row_number() OVER (ORDER BY ${order}) AS n FROM api_definitions${where} ORDER BY ${order}${window}) p), '[]'::json) AS apis`;

  it('scopes to the organisation and sorts newest first with a stable tie-break, counting in the same statement', () => {
    expect(buildApiListQuery({ orgId: 'org1' }, '-created_at', 20, 10)).toEqual([
      statement(' WHERE org_id = $1', 'created_at DESC, id DESC', ' LIMIT 10 OFFSET 20'),
      ['org1'],
    ]);
  });

  it('leaves the organisation out for super users and combines every filter', () => {
    const where =
      " WHERE api_type = $1 AND categories && $2::text[] AND auth_types && $3::text[] AND NOT is_child AND lower(name) LIKE lower($4) ESCAPE '\\'";
    expect(
      buildApiListQuery(
        { apiType: 'rest', categories: ['c', 'd'], authTypes: ['jwt'], baseOnly: true, q: 'Pet' },
        'name',
        0,
        10,
      ),
    ).toEqual([
      statement(where, 'lower(name) ASC, id ASC', ' LIMIT 10 OFFSET 0'),
      ['rest', ['c', 'd'], ['jwt'], '%Pet%'],
    ]);
  });

  it('leaves LIMIT and OFFSET out when every row is asked for, and empty lists filter nothing', () => {
    expect(buildApiListQuery({ orgId: 'o', categories: [], authTypes: [] }, '-name', 0, null)).toEqual([
      statement(' WHERE org_id = $1', 'lower(name) DESC, id DESC', ''),
      ['o'],
    ]);
  });

  it('counts every API for a super user without filters', () => {
    expect(buildApiListQuery({}, 'created_at', 0, 10)).toEqual([
      statement('', 'created_at ASC, id ASC', ' LIMIT 10 OFFSET 0'),
      [],
    ]);
  });

  it.each([
    [undefined, []],
    ['', []],
    ['a', ['a']],
    ['keyless,authToken', ['keyless', 'authToken']],
    [' a , ,b,', ['a', 'b']],
  ])('splits the comma list %p into %p', (value, items) => expect(commaList(value)).toEqual(items));

  it('takes LIKE wildcards in q literally', () => {
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});
