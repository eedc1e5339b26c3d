import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A credential is written once per approval and read only through its access request (the request's routes, its
 * app's, a revocation, a deletion), so one index is enough: the primary key becomes (access_request_id, id),
 * which serves every one of those reads and keeps each credential unique, and replaces both the key on `id` alone
 * and the index on `access_request_id`. The unique index of `credential_hash` goes: no statement reads a
 * credential by its hash, and a hash of 32 random bytes (SHA-256) does not repeat. An approval then writes one index
 * entry for its credential instead of three.
 */
export class CredentialsKeyedByRequest1763802000000 implements MigrationInterface {
  name = 'CredentialsKeyedByRequest1763802000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE portal_credentials DROP CONSTRAINT portal_credentials_pkey`);
    await q.query(
      `ALTER TABLE portal_credentials ADD CONSTRAINT portal_credentials_pkey PRIMARY KEY (access_request_id, id)`,
    );
    await q.query(`DROP INDEX portal_credentials_access_request`);
    await q.query(`DROP INDEX portal_credentials_hash`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE UNIQUE INDEX portal_credentials_hash ON portal_credentials (credential_hash) WHERE credential_hash IS NOT NULL`,
    );
    await q.query(`CREATE INDEX portal_credentials_access_request ON portal_credentials (access_request_id)`);
    await q.query(`ALTER TABLE portal_credentials DROP CONSTRAINT portal_credentials_pkey`);
    await q.query(`ALTER TABLE portal_credentials ADD CONSTRAINT portal_credentials_pkey PRIMARY KEY (id)`);
  }
}
