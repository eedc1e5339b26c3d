import { buildApiListQuery, commaList, containsPattern } from './api-list.query';

describe('GET /api/apis query', () => {
  it('scopes to the organisation and sorts newest first with a stable tie-break', () => {
    const { page, count } = buildApiListQuery({ orgId: 'org1' }, '-created_at', 20, 10);
    expect(page).toEqual([
      'SELECT list_entry FROM api_definitions WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT 10 OFFSET 20',
      ['org1'],
    ]);
    expect(count).toEqual(['SELECT count(*)::int AS total FROM api_definitions WHERE org_id = $1', ['org1']]);
  });

  it('leaves the organisation out for super users and combines every filter', () => {
    const { page } = buildApiListQuery(
      { apiType: 'rest', categories: ['c', 'd'], authTypes: ['jwt'], baseOnly: true, q: 'Pet' },
      'name',
      0,
      10,
    );
    expect(page[0]).toBe(
      "SELECT list_entry FROM api_definitions WHERE api_type = $1 AND categories && $2::text[] AND auth_types && $3::text[] AND NOT is_child AND lower(name) LIKE lower($4) ESCAPE '\\' ORDER BY lower(name) ASC, id ASC LIMIT 10 OFFSET 0",
    );
    expect(page[1]).toEqual(['rest', ['c', 'd'], ['jwt'], '%Pet%']);
  });

  it('leaves LIMIT and OFFSET out when every row is asked for, and empty lists filter nothing', () => {
    const { page } = buildApiListQuery({ orgId: 'o', categories: [], authTypes: [] }, '-name', 0, null);
    expect(page).toEqual([
      'SELECT list_entry FROM api_definitions WHERE org_id = $1 ORDER BY lower(name) DESC, id DESC',
      ['o'],
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
