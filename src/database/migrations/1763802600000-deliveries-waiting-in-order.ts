import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops the check of `held` (named webhook_deliveries_held_check, or with a digit after it where the log was
 * partitioned anew: the old table held the name then).
 */
const DROP_HELD_CHECK = `DO $$
  DECLARE c text;
  BEGIN
    FOR c IN SELECT conname FROM pg_constraint
              WHERE conrelid = 'webhook_deliveries'::regclass AND contype = 'c' AND conname ~ '^webhook_deliveries_held_check'
    LOOP
      EXECUTE format('ALTER TABLE webhook_deliveries DROP CONSTRAINT %I', c);
    END LOOP;
  END $$`;

/**
 * A delivery of an ordered webhook that waits behind an older one is marked (`held = 'order'`) and left out of the
 * `due` index: it keeps its due time, which is the oldest of all, and the reconciler's scan and the overdue gauge
 * walked that index in due order past every such delivery before reaching any other (a blocked backlog of 200 000
 * read whole every 2 s, and a scrape past its 1 s). An ordered webhook's head is found through `pending_order`, as
 * before. The constraint allows the new value for rows written from now on (NOT VALID: the rows there hold only
 * NULL and 'rate_limit', so there is nothing to check, and the log is not read for it).
 */
export class DeliveriesWaitingInOrder1763802600000 implements MigrationInterface {
  name = 'DeliveriesWaitingInOrder1763802600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(DROP_HELD_CHECK);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_held_check CHECK (held IN ('rate_limit', 'order')) NOT VALID`,
    );
    await q.query(`DROP INDEX webhook_deliveries_due`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
        WHERE status = 'pending' AND held IS DISTINCT FROM 'order'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE webhook_deliveries SET held = NULL WHERE held = 'order'`);
    await q.query(`DROP INDEX webhook_deliveries_due`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query(DROP_HELD_CHECK);
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_held_check CHECK (held IN ('rate_limit'))`,
    );
  }
}
