import { randomUUID } from 'node:crypto';
import { DataSource, QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { DeliveryStore } from '../../webhooks/delivery.store';
import { Sql } from '../sql';
import { DayPartitions } from '../day-partitions';
import { DeliveryLogByEventTime1763801500000 } from './1763801500000-delivery-log-by-event-time';

const DELIVERY = `id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, next_trigger, locked_until, created_at, updated_at, event_seq, held`;
const ATTEMPT = `delivery_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, trigger`;

// Upgrading a populated log from the layout by finish time (rows in the open partition, day partitions and the
// default ones) to the layout by event time, and back: every row and value is kept both ways.
describe('migration DeliveryLogByEventTime', () => {
  const fixture = useDataSource();
  let db: DataSource;
  let runner: QueryRunner;
  const migration = new DeliveryLogByEventTime1763801500000();

  beforeAll(async () => {
    db = fixture.db;
    const r = (runner = db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  const rows = async () => ({
    deliveries: await runner.query(`SELECT ${DELIVERY} FROM webhook_deliveries ORDER BY id`),
    attempts: await runner.query(`SELECT ${ATTEMPT} FROM webhook_delivery_attempts ORDER BY delivery_id, number`),
  });
  const partitionOf = async (table: string, column: string, id: string) =>
    (await runner.query(`SELECT DISTINCT tableoid::regclass::text AS p FROM ${table} WHERE ${column} = $1`, [id])).map(
      (r: { p: string }) => r.p,
    );
  const dayOf = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');

  it('carries every delivery and attempt over, each into the partition of its event’s day, and back', async () => {
    await migration.down(runner);
    const webhook = randomUUID();
    await runner.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at) VALUES ($1, 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x', now() - interval '400 days')`,
      [webhook],
    );
    const DAY = 86_400_000;
    const at = (days: number) => new Date(Date.now() - days * DAY);
    // a pending retry of an event 3 days old (open partition), one delivered 2 days ago of an event 5 days old
    // (day partition), one failed 400 days ago (default partition), and a delivered one whose event is gone
    const cases = [
      { status: 'pending', occurred: at(3), finished: 'infinity' },
      { status: 'delivered', occurred: at(5), finished: at(2).toISOString() },
      { status: 'failed', occurred: at(400), finished: at(399).toISOString() },
      { status: 'delivered', occurred: null, finished: at(20).toISOString(), created: at(21) },
    ].map((c) => ({ ...c, event: randomUUID(), delivery: randomUUID() }));
    for (const c of cases) {
      if (c.occurred)
        await runner.query(
          `INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at) VALUES ($1, 'AccessRequestApproved', '{"ID":1}', $2, $2)`,
          [c.event, c.occurred],
        );
      const created = c.created ?? c.occurred;
      await runner.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, next_attempt_at, next_trigger, locked_until,
                                         created_at, updated_at, event_seq, held, finished_at)
         VALUES ($1, $2, $3, 'AccessRequestApproved', $4, 2, CASE WHEN $4 = 'pending' THEN now() + interval '1 minute' END, 'scheduled',
                 CASE WHEN $4 = 'pending' THEN now() END, $5, CASE WHEN $4 = 'pending' THEN now() ELSE $6::timestamptz END, 7,
                 CASE WHEN $4 = 'pending' THEN 'rate_limit' END, $6::timestamptz)`,
        [c.delivery, webhook, c.event, c.status, created, c.finished],
      );
      for (const n of [1, 2])
        await runner.query(
          `INSERT INTO webhook_delivery_attempts (${ATTEMPT}, delivery_finished_at)
           VALUES ($1, $2, $3, $4, 500, 10 + $3, 'http_status', 'busy', 'scheduled', $5::timestamptz)`,
          [c.delivery, webhook, n, new Date(created.getTime() + n * 1000), c.finished],
        );
    }
    const [pending, delivered, ancient, orphan] = cases;
    expect(await partitionOf('webhook_deliveries', 'id', pending.delivery)).toEqual(['webhook_deliveries_open']);
    expect(await partitionOf('webhook_deliveries', 'id', delivered.delivery)).toEqual([
      `webhook_deliveries_p${dayOf(at(2))}`,
    ]);
    expect(await partitionOf('webhook_deliveries', 'id', ancient.delivery)).toEqual(['webhook_deliveries_default']);
    const before = await rows();
    expect(before.deliveries).toHaveLength(4);
    expect(before.attempts).toHaveLength(8);

    await migration.up(runner);
    expect(await rows()).toEqual(before);
    const key = async (id: string) =>
      (await runner.query(`SELECT event_occurred_at FROM webhook_deliveries WHERE id = $1`, [id]))[0].event_occurred_at;
    expect(await key(pending.delivery)).toEqual(pending.occurred);
    expect(await key(orphan.delivery)).toEqual(orphan.created); // its event is gone: the delivery's creation
    for (const c of [pending, delivered]) {
      const day = dayOf(c.occurred!);
      expect(await partitionOf('webhook_deliveries', 'id', c.delivery)).toEqual([`webhook_deliveries_p${day}`]);
      expect(await partitionOf('webhook_delivery_attempts', 'delivery_id', c.delivery)).toEqual([
        `webhook_delivery_attempts_p${day}`,
      ]);
    }
    expect(await partitionOf('webhook_deliveries', 'id', ancient.delivery)).toEqual(['webhook_deliveries_default']);

    // one delivery per (event, webhook) and one record per attempt, enforced by the database
    await expect(
      runner.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, event_occurred_at) VALUES ($1, $2, $3, 'AccessRequestApproved', $4)`,
        [randomUUID(), webhook, delivered.event, delivered.occurred],
      ),
    ).rejects.toMatchObject({ code: '23505' });
    await expect(
      runner.query(
        `INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, duration_ms, trigger, event_occurred_at) VALUES ($1, 1, now(), 1, 'manual', $2)`,
        [delivered.delivery, delivered.occurred],
      ),
    ).rejects.toMatchObject({ code: '23505' });
    // the relay's arbiter: relaying the event again creates nothing
    await runner.query(`UPDATE outbox_events SET relayed_at = NULL WHERE id = $1`, [delivered.event]);
    const relayed = await new DeliveryStore(new Sql(db), new DayPartitions(new Sql(db))).relay(
      { ids: [delivered.event], from: delivered.occurred, to: delivered.occurred },
      10,
    );
    expect(relayed).toEqual({ events: 1, refused: 0, deliveries: [] });

    await migration.down(runner);
    expect(await rows()).toEqual(before);
    expect(await partitionOf('webhook_deliveries', 'id', pending.delivery)).toEqual(['webhook_deliveries_open']);
    expect(await partitionOf('webhook_delivery_attempts', 'delivery_id', pending.delivery)).toEqual([
      'webhook_delivery_attempts_open',
    ]);
    expect(await partitionOf('webhook_deliveries', 'id', delivered.delivery)).toEqual([
      `webhook_deliveries_p${dayOf(at(2))}`,
    ]);
    expect(await partitionOf('webhook_delivery_attempts', 'delivery_id', delivered.delivery)).toEqual([
      `webhook_delivery_attempts_p${dayOf(at(2))}`,
    ]);

    await migration.up(runner);
    expect(await rows()).toEqual(before);
  });
});
