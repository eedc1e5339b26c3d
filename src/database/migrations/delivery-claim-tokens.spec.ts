import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { DeliveryClaimTokens1763802800000 } from './1763802800000-delivery-claim-tokens';

// Deliveries carry the token of the claim that holds them, in every partition; down takes the column away and
// leaves the deliveries as they were.
describe('migration DeliveryClaimTokens', () => {
  const fixture = useDataSource();
  const migration = new DeliveryClaimTokens1763802800000();
  let runner: QueryRunner;

  beforeAll(() => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  /** The partitions of the deliveries that have a `claim_token` column, and how many there are in all. */
  const withToken = async (): Promise<{ with: number; all: number }> =>
    (
      await runner.query(
        `SELECT count(a.attname)::int AS with, count(*)::int AS all
           FROM pg_inherits i LEFT JOIN pg_attribute a ON a.attrelid = i.inhrelid AND a.attname = 'claim_token' AND NOT a.attisdropped
          WHERE i.inhparent = 'webhook_deliveries'::regclass`,
      )
    )[0];

  it('adds the column to every partition, and down takes it away with the deliveries left whole', async () => {
    const webhook = randomUUID();
    await runner.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted) VALUES ($1, 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x')`,
      [webhook],
    );
    // one delivery today (a day partition) and one far ahead (the default partition)
    await runner.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, next_attempt_at, event_occurred_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved', now(), t FROM unnest(ARRAY[now(), now() + interval '400 days']) t`,
      [webhook],
    );
    const token = randomUUID();
    await runner.query(
      `UPDATE webhook_deliveries SET locked_until = now() + interval '1 minute', claim_token = $1 WHERE webhook_id = $2`,
      [token, webhook],
    );
    const partitions = await withToken();
    expect(partitions.all).toBeGreaterThan(1);
    expect(partitions.with).toBe(partitions.all);
    const rows = () =>
      runner.query(
        `SELECT tableoid::regclass::text AS partition, status, locked_until IS NOT NULL AS leased FROM webhook_deliveries
          WHERE webhook_id = $1 ORDER BY event_occurred_at`,
        [webhook],
      );
    const before = await rows();
    expect(before.map((r: { partition: string }) => r.partition)).toEqual([
      expect.stringMatching(/^webhook_deliveries_p\d{8}$/),
      'webhook_deliveries_default',
    ]);

    await migration.down(runner);
    expect((await withToken()).with).toBe(0);
    expect(await rows()).toEqual(before);

    await migration.up(runner);
    expect(await withToken()).toEqual(partitions);
    expect(
      await runner.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE claim_token IS NOT NULL`),
    ).toEqual([{ n: 0 }]);
  });
});
