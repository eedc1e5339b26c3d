import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two gauges read at every scrape (webhook_deliveries_rate_limited, webhook_oldest_pending_delivery_age_seconds)
 * read every partition of the delivery log whole: the index of held deliveries was not made again when the log was
 * partitioned by event time, and the oldest pending delivery had none. Each gets a partial index that holds only the
 * rows it counts (held ones; pending ones), so a scrape reads a few pages however long the log.
 */
export class DeliveryLogGaugeIndexes1763802500000 implements MigrationInterface {
  name = 'DeliveryLogGaugeIndexes1763802500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_held ON webhook_deliveries (held) WHERE held IS NOT NULL`);
    await q.query(
      `CREATE INDEX webhook_deliveries_pending_created ON webhook_deliveries (created_at) WHERE status = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_pending_created`);
    await q.query(`DROP INDEX webhook_deliveries_held`);
  }
}
