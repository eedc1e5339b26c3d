import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Access requests keep the portal's catalogue ids a client may give besides the names: `product_ids` for the
 * products and `plan_id` for the plan. Requests made before (or without them) read `[]` and 0.
 */
export class AccessRequestCatalogueIds1763800500000 implements MigrationInterface {
  name = 'AccessRequestCatalogueIds1763800500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE portal_access_requests
        ADD COLUMN product_ids integer[] NOT NULL DEFAULT '{}' CHECK (array_position(product_ids, NULL) IS NULL),
        ADD COLUMN plan_id     integer   NOT NULL DEFAULT 0 CHECK (plan_id >= 0)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE portal_access_requests DROP COLUMN product_ids, DROP COLUMN plan_id`);
  }
}
