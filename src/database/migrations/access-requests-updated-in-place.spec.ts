import { QueryRunner } from 'typeorm';
import { useDataSource } from '../../../test/helpers/use-service';
import { AccessRequestsUpdatedInPlace1763801900000 } from './1763801900000-access-requests-updated-in-place';

// The status index goes and pages keep room, so that a status change is a heap-only update; down puts both back.
describe('migration AccessRequestsUpdatedInPlace', () => {
  const fixture = useDataSource();
  const migration = new AccessRequestsUpdatedInPlace1763801900000();
  let runner: QueryRunner;

  beforeAll(() => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  const statusIndex = async (): Promise<boolean> =>
    (await runner.query(`SELECT to_regclass('portal_access_requests_status') IS NOT NULL AS present`))[0].present;
  const fillfactor = async (): Promise<string[] | null> =>
    (await runner.query(`SELECT reloptions FROM pg_class WHERE oid = 'portal_access_requests'::regclass`))[0]
      .reloptions;
  const requests = async () =>
    runner.query(`SELECT id, app_id, status, catalogue, plan, products FROM portal_access_requests ORDER BY id`);

  /**
   * Approves the pending requests whose id ends in `digit` (one in ten, a few on every page) one by one in a
   * transaction: how many of the updates were heap-only.
   */
  async function heapOnlyApprovals(digit: number): Promise<number> {
    const hot = async (): Promise<number> =>
      (
        await runner.query(`SELECT pg_stat_get_xact_tuples_hot_updated('portal_access_requests'::regclass)::int AS hot`)
      )[0].hot;
    // the backend's counts since they were last reported, which happens only between transactions
    await runner.startTransaction();
    try {
      const before = await hot();
      const ids: { id: number }[] = await runner.query(
        `SELECT id FROM portal_access_requests WHERE status = 'pending' AND id % 10 = $1 ORDER BY id`,
        [digit],
      );
      for (const { id } of ids) {
        await runner.query(`UPDATE portal_access_requests SET status = 'approved', updated_at = now() WHERE id = $1`, [
          id,
        ]);
      }
      return (await hot()) - before;
    } finally {
      await runner.commitTransaction();
    }
  }

  it('keeps every request both ways, and makes approvals heap-only updates once up', async () => {
    await migration.down(runner);
    expect(await statusIndex()).toBe(true);
    expect(await fillfactor()).toBeNull();

    const [app] = await runner.query(`INSERT INTO portal_apps (name, user_id) VALUES ('App', 1) RETURNING id`);
    await runner.query(
      `INSERT INTO portal_access_requests (app_id, catalogue, plan, products, auth_type, dcr_enabled, provision_immediately, user_ref, status)
       SELECT $1, 'Payments', 'Gold', ARRAY['payments-api'], 'authToken', false, false, 'User#1', 'pending'
         FROM generate_series(1, 200)`,
      [app.id],
    );
    const before = await requests();

    await migration.up(runner);
    expect(await statusIndex()).toBe(false);
    expect(await fillfactor()).toEqual(['fillfactor=85']);
    expect(await requests()).toEqual(before);
    // rows written under the new fillfactor have room on their page for their next version
    await runner.query(`VACUUM FULL portal_access_requests`);
    expect(await heapOnlyApprovals(0)).toBe(20);

    const after = await requests();
    await migration.down(runner);
    expect(await statusIndex()).toBe(true);
    expect(await fillfactor()).toBeNull();
    expect(await requests()).toEqual(after);
    // with the status index back, a status change writes a new index entry: never heap-only
    expect(await heapOnlyApprovals(5)).toBe(0);

    await migration.up(runner);
    expect(await statusIndex()).toBe(false);
  });
});
