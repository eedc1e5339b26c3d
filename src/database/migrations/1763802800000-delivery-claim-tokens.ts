import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each claim of deliveries writes a token of its own (a uuid the worker made for that claim statement) beside its
 * lease. A claim whose answer was lost (its connection failed after it committed) left its deliveries leased to a
 * worker that never learned of it, and once the lease lapsed each of them was recorded as an attempt cut off (a
 * `timeout` without a status code), though nothing had been sent: one step of the schedule used up, and on the last
 * allowed attempt a delivery failed unsent. With the token, the worker gives such a claim back (DeliveryStore
 * releaseClaims): the deliveries it holds under that token, and no other claim's.
 *
 * No index holds the column, so a claim stays a heap-only update. Adding a column without a default to the
 * partitioned table is a change of the catalogue alone, in every partition at once.
 */
export class DeliveryClaimTokens1763802800000 implements MigrationInterface {
  name = 'DeliveryClaimTokens1763802800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN claim_token uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN claim_token`);
  }
}
