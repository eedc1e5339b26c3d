import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals and rejections update an access request in place. A status change used to write a new entry into
 * every index of the table (the status index named the status, so the update could never be a heap-only one);
 * without that index, and with room left in each page for the new version of its rows (fillfactor 85, for rows
 * written from now on), the update writes the row alone. Listing requests by status reads them in ID order
 * through the primary key, which is how the listing pages them anyway.
 */
export class AccessRequestsUpdatedInPlace1763801900000 implements MigrationInterface {
  name = 'AccessRequestsUpdatedInPlace1763801900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX portal_access_requests_status`);
    await q.query(`ALTER TABLE portal_access_requests SET (fillfactor = 85)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE portal_access_requests RESET (fillfactor)`);
    await q.query(`CREATE INDEX portal_access_requests_status ON portal_access_requests (status, id)`);
  }
}
