import { buildApiListQuery, containsPattern } from './api-list.query';

describe('GET /api/apis query', () => {
  it('scopes to the organisation and sorts newest first with a stable tie-break', () => {
    const { page, count } = buildApiListQuery({ orgId: 'org1' }, '-created_at', 20, 10);
    expect(page).toEqual(['SELECT list_entry FROM api_definitions WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT 10 OFFSET 20', ['org1']]);
    expect(count).toEqual(['SELECT count(*)::int AS total FROM api_definitions WHERE org_id = $1', ['org1']]);
  });

  it('leaves the organisation out for super users and combines every filter', () => {
    const { page } = buildApiListQuery({ apiType: 'rest', category: 'c', authType: 'jwt', baseOnly: true, q: 'Pet' }, 'name', 0, 10);
    expect(page[0]).toBe(
      "SELECT list_entry FROM api_definitions WHERE api_type = $1 AND categories @> ARRAY[$2::text] AND auth_types @> ARRAY[$3::text] AND NOT is_child AND lower(name) LIKE $4 ESCAPE '\\' ORDER BY lower(name) ASC, id ASC LIMIT 10 OFFSET 0",
    );
    expect(page[1]).toEqual(['rest', 'c', 'jwt', '%pet%']);
  });

  it('takes LIKE wildcards in q literally', () => {
    expect(containsPattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});
