import { MigrationInterface, QueryRunner } from 'typeorm';
import { OasDocument } from '../../gateway/apis/oas-document';
import { ApiListEntry, authHeaderName, authTypesOf } from '../../gateway/apis/projection';

/** Definitions read and corrected per statement. */
const PAGE = 500;

/**
 * Stored definitions whose security schemes are given as a local `$ref` get the columns such a definition gets
 * when it is written today. Until `cc08dfb` a `$ref` scheme was not followed: `{"$ref": "#/components/
 * securitySchemes/j"}` with j a JWT bearer was listed `use_keyless: true`, and `auth_type=jwt` missed it. Only the
 * projected authentication is rewritten (`auth_types`, and `use_keyless`, `use_oauth2` and `auth.auth_header_name`
 * of the list entry, which keeps its member order); the documents, `updated_at` and every other definition stay
 * as they are. It reads the projection's own functions, so a definition comes out as a write would store it.
 *
 * Down leaves the corrected columns: they are derived from the documents, and the earlier ones were wrong.
 */
export class ReprojectRefSecuritySchemes1763802200000 implements MigrationInterface {
  name = 'ReprojectRefSecuritySchemes1763802200000';

  async up(q: QueryRunner): Promise<void> {
    let after = '';
    for (;;) {
      const rows: { id: string; oas: string; list_entry: string }[] = await q.query(
        `SELECT id, oas::text AS oas, list_entry::text AS list_entry FROM api_definitions
          WHERE id > $1 AND jsonb_path_exists(oas::jsonb, '$.components.securitySchemes.*."$ref"')
          ORDER BY id LIMIT ${PAGE}`,
        [after],
      );
      if (rows.length === 0) return;
      const corrected = rows.map((r) => {
        const doc = JSON.parse(r.oas) as OasDocument;
        const entry = JSON.parse(r.list_entry) as ApiListEntry;
        const authTypes = authTypesOf(doc);
        const keyless = authTypes.includes('keyless');
        entry.use_keyless = keyless;
        entry.use_oauth2 = !keyless && authTypes.includes('oauth');
        entry.auth = { ...entry.auth, auth_header_name: authHeaderName(doc) };
        return { id: r.id, authTypes: `{${authTypes.join(',')}}`, entry: JSON.stringify(entry) };
      });
      await q.query(
        `UPDATE api_definitions d SET auth_types = c.auth_types::text[], list_entry = c.entry::json
           FROM unnest($1::text[], $2::text[], $3::text[]) AS c(id, auth_types, entry)
          WHERE d.id = c.id`,
        [corrected.map((c) => c.id), corrected.map((c) => c.authTypes), corrected.map((c) => c.entry)],
      );
      after = rows[rows.length - 1].id;
    }
  }

  async down(): Promise<void> {
    // nothing to undo: see above
  }
}
