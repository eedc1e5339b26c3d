import { randomUUID } from 'node:crypto';
import { useDataSource } from '../../test/helpers/use-service';
import { DayPartitions } from '../database/day-partitions';
import { Sql } from '../database/sql';
import { OutboxRow, OutboxStore } from './outbox.store';

// The outbox inserts an event straight into the partition of its day; these are the cases where it cannot.
describe('OutboxStore: the partition an event is written to', () => {
  const fixture = useDataSource();
  let sql: Sql;
  let outbox: OutboxStore;

  beforeAll(async () => {
    sql = fixture.sql;
    outbox = new OutboxStore(new DayPartitions(sql));
  });

  const event = (occurredAt: Date): OutboxRow => ({
    id: randomUUID(),
    name: 'AccessRequestApproved',
    payload: { ID: 1 },
    occurredAt,
  });
  const partitionOf = async (id: string): Promise<string> => {
    const [row] = await sql.query<{ p: string }>(
      `SELECT tableoid::regclass::text AS p FROM outbox_events WHERE id = $1`,
      [id],
    );
    return row.p;
  };
  const day = (d: Date) => d.toISOString().slice(0, 10).replace(/-/g, '');

  it("writes the events of a change to their day's partition, also inside a statement that makes the change", async () => {
    const now = new Date();
    const e = event(now);
    await sql.transaction((tx) => outbox.insert(tx, [e], null));
    expect(await partitionOf(e.id)).toBe(`outbox_events_p${day(now)}`);

    const f = event(now);
    const parts = await outbox.insertParts([f], null, { first: 1, when: 'true' });
    await sql.query(`WITH ${parts.cte} SELECT ${parts.notify}`, parts.params);
    expect(await partitionOf(f.id)).toBe(`outbox_events_p${day(now)}`);
  });

  it('writes events of a change that spans midnight each to its own day', async () => {
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    const [before, after] = [event(new Date(midnight.getTime() - 1)), event(midnight)];
    await sql.transaction((tx) => outbox.insert(tx, [before, after], null));
    expect(await partitionOf(before.id)).toBe(`outbox_events_p${day(before.occurredAt)}`);
    expect(await partitionOf(after.id)).toBe(`outbox_events_p${day(after.occurredAt)}`);
  });

  it('writes an event of a day that has no partition (yet) to the default one', async () => {
    const far = new Date(Date.UTC(2100, 0, 1, 12));
    const e = event(far);
    await sql.transaction((tx) => outbox.insert(tx, [e], null));
    expect(await partitionOf(e.id)).toBe('outbox_events_default');
  });
});
