import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The relay now creates an event's deliveries in the statement that marks it relayed, so there is no
 * separate fan-out step left to track. Events handed to the old events queue but never fanned out are
 * marked unrelayed again, so that the new relay creates their deliveries (unique per event and webhook,
 * so nothing is created twice).
 */
export class OneJobPerDelivery1763800600000 implements MigrationInterface {
  name = 'OneJobPerDelivery1763800600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE outbox_events SET relayed_at = NULL WHERE relayed_at IS NOT NULL AND fanned_out_at IS NULL`);
    await q.query(`DROP INDEX outbox_events_not_fanned_out`);
    await q.query(`ALTER TABLE outbox_events DROP COLUMN fanned_out_at`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events ADD COLUMN fanned_out_at timestamptz`);
    await q.query(`UPDATE outbox_events SET fanned_out_at = relayed_at WHERE relayed_at IS NOT NULL`);
    await q.query(
      `CREATE INDEX outbox_events_not_fanned_out ON outbox_events (relayed_at) WHERE fanned_out_at IS NULL`,
    );
  }
}
