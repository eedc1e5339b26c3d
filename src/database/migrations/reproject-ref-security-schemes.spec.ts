import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { projectDefinition } from '../../gateway/apis/projection';
import { OasDocument } from '../../gateway/apis/oas-document';
import { ReprojectRefSecuritySchemes1763802200000 } from './1763802200000-reproject-ref-security-schemes';

/** A definition whose required scheme `k` is `$ref` to `target`, with `extra` schemes before it. */
function refDoc(target: Record<string, unknown>, extra: Record<string, unknown> = {}): OasDocument {
  return {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {},
    components: { securitySchemes: { ...extra, k: { $ref: '#/components/securitySchemes/j' }, j: target } },
    security: [{ k: [] }],
    'x-gateway-api-gateway': { info: { name: 'n', state: { active: true } } },
  } as unknown as OasDocument;
}

/** What the earlier projection stored for a `$ref` scheme: not followed, so nothing required was recognised. */
const asStoredBefore = (id: string, doc: OasDocument) => {
  const cols = projectDefinition(id, doc);
  return {
    ...cols,
    authTypes: ['keyless'],
    entry: { ...cols.entry, use_keyless: true, use_oauth2: false, auth: { auth_header_name: 'Authorization' } },
  };
};

// Definitions stored while a `$ref` security scheme was not followed get the authentication a write gives them now.
describe('migration ReprojectRefSecuritySchemes', () => {
  const fixture = useDataSource();
  const migration = new ReprojectRefSecuritySchemes1763802200000();
  let runner: QueryRunner;

  beforeAll(() => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  const insert = async (id: string, doc: OasDocument, cols = asStoredBefore(id, doc)) => {
    await runner.query(
      `INSERT INTO api_definitions (id, org_id, name, api_type, categories, auth_types, child_ids, is_child, oas, list_entry, created_at, updated_at)
       VALUES ($1, '', $2, 'rest', '{}', $3, '{}', false, $4::json, $5::json, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')`,
      [id, cols.name, cols.authTypes, JSON.stringify(doc), JSON.stringify(cols.entry)],
    );
  };
  const stored = async (id: string) =>
    (
      await runner.query(
        `SELECT auth_types, list_entry::text AS entry, oas::text AS oas, updated_at FROM api_definitions WHERE id = $1`,
        [id],
      )
    )[0] as { auth_types: string[]; entry: string; oas: string; updated_at: Date };

  it('rewrites the authentication of definitions with $ref schemes as a write would, and nothing else', async () => {
    const jwt = refDoc({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    const oauth = refDoc({ type: 'oauth2', flows: {} });
    const header = refDoc({ type: 'apiKey', in: 'header', name: 'X-Key' });
    const plain = refDoc({ type: 'http', scheme: 'basic' });
    // no $ref at all: left alone, even though its columns (made up here) disagree with its document
    delete (plain.components as { securitySchemes: Record<string, unknown> }).securitySchemes.k;
    (plain as { security: unknown }).security = [{ j: [] }];
    const cases: [string, OasDocument][] = [
      ['ref-jwt', jwt],
      ['ref-oauth', oauth],
      ['ref-header', header],
      ['no-ref', plain],
    ];
    for (const [id, doc] of cases) await insert(id, doc);
    const before: Record<string, Awaited<ReturnType<typeof stored>>> = {};
    for (const [id] of cases) before[id] = await stored(id);

    await migration.up(runner);

    for (const [id, doc] of cases.slice(0, 3)) {
      const now = await stored(id);
      const written = projectDefinition(id, doc);
      expect(now.auth_types).toEqual(written.authTypes);
      // the member order of the entry is kept, as the list answer shows it
      expect(now.entry).toBe(JSON.stringify(written.entry));
      expect(now.oas).toBe(before[id].oas);
      expect(now.updated_at).toEqual(before[id].updated_at);
    }
    expect((await stored('ref-jwt')).auth_types).toEqual(['jwt']);
    expect(JSON.parse((await stored('ref-oauth')).entry)).toMatchObject({ use_keyless: false, use_oauth2: true });
    expect(JSON.parse((await stored('ref-header')).entry).auth).toEqual({ auth_header_name: 'X-Key' });
    expect(await stored('no-ref')).toEqual(before['no-ref']);

    // a second run changes nothing; down leaves the corrected columns
    await migration.up(runner);
    await migration.down();
    expect((await stored('ref-jwt')).auth_types).toEqual(['jwt']);
  });
});
