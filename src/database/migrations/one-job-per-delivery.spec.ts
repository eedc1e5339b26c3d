import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { OneJobPerDelivery1763800600000 } from './1763800600000-one-job-per-delivery';

// Upgrading a database whose events went through the old events queue: none may be left without deliveries.
describe('migration OneJobPerDelivery', () => {
  const fixture = useDataSource();
  let db: DataSource;

  beforeAll(async () => {
    db = fixture.db;
  });

  it('hands events relayed to the old events queue but never fanned out back to the relay, and keeps the others', async () => {
    const migration = new OneJobPerDelivery1763800600000();
    const runner = db.createQueryRunner();
    try {
      await migration.down(runner);
      const [waiting, done, fresh] = [randomUUID(), randomUUID(), randomUUID()];
      await runner.query(
        `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at, fanned_out_at) VALUES
           ($1, 'AccessRequestApproved', '{}', now(), now(), NULL),
           ($2, 'AccessRequestApproved', '{}', now(), now(), now()),
           ($3, 'AccessRequestApproved', '{}', now(), NULL, NULL)`,
        [waiting, done, fresh],
      );
      await migration.up(runner);
      const rows: { id: string; relayed: boolean }[] = await runner.query(
        `SELECT id, relayed_at IS NOT NULL AS relayed FROM outbox_events WHERE id = ANY($1)`,
        [[waiting, done, fresh]],
      );
      const relayed = Object.fromEntries(rows.map((r) => [r.id, r.relayed]));
      expect(relayed).toEqual({ [waiting]: false, [done]: true, [fresh]: false });
      const [{ n }] = await runner.query(
        `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'outbox_events' AND column_name = 'fanned_out_at'`,
      );
      expect(n).toBe(0);
    } finally {
      await runner.release();
    }
  });
});
