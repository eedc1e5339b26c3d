import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { DeliveriesWaitingInOrder1763802600000 } from './1763802600000-deliveries-waiting-in-order';

// Deliveries waiting for their turn may be marked held 'order' and are left out of the due index; down unmarks them.
describe('migration DeliveriesWaitingInOrder', () => {
  const fixture = useDataSource();
  const migration = new DeliveriesWaitingInOrder1763802600000();
  let runner: QueryRunner;
  let webhook: string;

  beforeAll(async () => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
    webhook = randomUUID();
    await runner.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted, ordered)
       VALUES ($1, 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x', true)`,
      [webhook],
    );
  });

  const mark = (held: string) =>
    runner.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, next_attempt_at, event_seq, event_occurred_at, held)
       VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved', now() - interval '1 hour', 1, now(), $2)`,
      [webhook, held],
    );
  const dueIndex = async () =>
    (await runner.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'webhook_deliveries_due'`))[0].indexdef;
  const marked = async () =>
    (await runner.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE held = 'order'`))[0].n;

  it('allows the mark and leaves marked rows out of the due index; down unmarks them, and the old rule holds again', async () => {
    await mark('order');
    await mark('rate_limit');
    expect(await dueIndex()).toContain(`WHERE ((status = 'pending'::text) AND (held IS DISTINCT FROM 'order'::text))`);
    await expect(mark('later')).rejects.toThrow(/webhook_deliveries_held_check/);

    await migration.down(runner);
    expect(await marked()).toBe(0);
    expect(await dueIndex()).toMatch(/WHERE \(status = 'pending'::text\)$/);
    await expect(mark('order')).rejects.toThrow(/webhook_deliveries_held_check/);
    await mark('rate_limit');

    await migration.up(runner);
    await mark('order');
    expect(await marked()).toBe(1);
  });
});
