import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { DeliveryLogGaugeIndexes1763802500000 } from './1763802500000-delivery-log-gauge-indexes';

// The two gauges' partial indexes on every delivery partition, those there are and those made later; down drops them.
describe('migration DeliveryLogGaugeIndexes', () => {
  const fixture = useDataSource();
  const migration = new DeliveryLogGaugeIndexes1763802500000();
  let runner: QueryRunner;

  beforeAll(() => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  /** The definitions of the two indexes on each delivery partition, without the partition's own names. */
  const gaugeIndexes = async (): Promise<{ partitions: number; defs: Set<string> }> => {
    const partitions: { name: string }[] = await runner.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'webhook_deliveries'::regclass`,
    );
    const rows: { table: string; def: string }[] = await runner.query(
      `SELECT tablename AS table, regexp_replace(indexdef, '^CREATE INDEX \\S+ ON public\\.\\S+ ', '') AS def FROM pg_indexes
        WHERE tablename = ANY($1) AND (indexdef LIKE '%(held)%' OR indexdef LIKE '%(created_at) WHERE%')`,
      [partitions.map((p) => p.name)],
    );
    for (const p of partitions)
      expect(rows.filter((r) => r.table === p.name).length).toBe(rows.length / partitions.length);
    return { partitions: partitions.length, defs: new Set(rows.map((r) => r.def)) };
  };
  const BOTH = new Set([
    'USING btree (held) WHERE (held IS NOT NULL)',
    "USING btree (created_at) WHERE (status = 'pending'::text)",
  ]);

  it('puts both indexes on every partition, and on those made later; down takes them off', async () => {
    const up = await gaugeIndexes();
    expect(up.partitions).toBeGreaterThan(1);
    expect(up.defs).toEqual(BOTH);

    await migration.down(runner);
    expect((await gaugeIndexes()).defs).toEqual(new Set());

    await migration.up(runner);
    const day = new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10);
    await runner.query(`SELECT delivery_log_ensure_partitions($1::date, $1::date)`, [day]);
    const later = await gaugeIndexes();
    expect(later.partitions).toBeGreaterThan(up.partitions);
    expect(later.defs).toEqual(BOTH);
  });
});
