import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { CredentialsKeyedByRequest1763802000000 } from './1763802000000-credentials-keyed-by-request';

// One index for credentials, keyed by their request; down puts back the key on id and the request and hash indexes.
describe('migration CredentialsKeyedByRequest', () => {
  const fixture = useDataSource();
  const migration = new CredentialsKeyedByRequest1763802000000();
  let runner: QueryRunner;

  beforeAll(() => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  const indexes = async (): Promise<string[]> =>
    (
      await runner.query(
        `SELECT regexp_replace(pg_get_indexdef(indexrelid), '^CREATE (UNIQUE )?INDEX (\\S+) ON \\S+ ', '\\1\\2 ') AS d
           FROM pg_index WHERE indrelid = 'portal_credentials'::regclass ORDER BY 1`,
      )
    ).map((r: { d: string }) => r.d);
  const credentials = async () =>
    runner.query(
      `SELECT id, access_request_id, credential_encrypted, credential_hash, revoked_at FROM portal_credentials ORDER BY id`,
    );
  /** How the credentials of request $1 in force are read (the request's routes). */
  const plan = async (id: number): Promise<string> =>
    (
      await runner.query(
        `EXPLAIN (COSTS OFF) SELECT * FROM portal_credentials c WHERE c.access_request_id = ${id} AND c.revoked_at IS NULL`,
      )
    )
      .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'])
      .join('\n');

  it('keeps every credential both ways, and reads a request’s credentials through the one key once up', async () => {
    await migration.down(runner);
    const old = [
      'UNIQUE portal_credentials_hash USING btree (credential_hash) WHERE (credential_hash IS NOT NULL)',
      'UNIQUE portal_credentials_pkey USING btree (id)',
      'portal_credentials_access_request USING btree (access_request_id)',
    ];
    expect(await indexes()).toEqual(old);

    const [app] = await runner.query(`INSERT INTO portal_apps (name, user_id) VALUES ('App', 1) RETURNING id`);
    const ars: { id: number }[] = await runner.query(
      `INSERT INTO portal_access_requests (app_id, catalogue, plan, products, auth_type, dcr_enabled, provision_immediately, user_ref, status)
       SELECT $1, 'Payments', 'Gold', ARRAY['payments-api'], 'authToken', false, false, 'User#1', 'approved'
         FROM generate_series(1, 300) RETURNING id`,
      [app.id],
    );
    // two credentials for each request, the first of them revoked
    await runner.query(
      `INSERT INTO portal_credentials (access_request_id, credential_encrypted, credential_hash, revoked_at)
       SELECT ar, 'sealed-' || ar || '-' || n, encode(sha256((ar || '-' || n)::text::bytea), 'hex'), CASE WHEN n = 1 THEN now() END
         FROM unnest($1::int[]) AS ar, generate_series(1, 2) AS n`,
      [ars.map((a) => a.id)],
    );
    await runner.query(`ANALYZE portal_credentials`);
    const before = await credentials();
    expect(before).toHaveLength(600);

    await migration.up(runner);
    expect(await indexes()).toEqual(['UNIQUE portal_credentials_pkey USING btree (access_request_id, id)']);
    expect(await credentials()).toEqual(before);
    await runner.query(`ANALYZE portal_credentials`);
    expect(await plan(ars[7].id)).toMatch(/Index Scan (using|on) portal_credentials_pkey/);
    // still one credential per id
    await expect(
      runner.query(`INSERT INTO portal_credentials (id, access_request_id) VALUES ($1, $2)`, [
        before[0].id,
        before[0].access_request_id,
      ]),
    ).rejects.toThrow(/portal_credentials_pkey/);

    await migration.down(runner);
    expect(await indexes()).toEqual(old);
    expect(await credentials()).toEqual(before);
    await migration.up(runner);
  });
});
