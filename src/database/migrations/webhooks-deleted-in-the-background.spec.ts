import { randomUUID } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { webhookRows } from '../../../test/helpers/events';
import { useDataSource } from '../../../test/helpers/use-service';
import { WebhooksDeletedInTheBackground1763802700000 } from './1763802700000-webhooks-deleted-in-the-background';

// Webhooks may be marked deleted, waiting for the purge; down purges those at once. Deleting a webhook's row deletes
// its attempts through the attempts' indexes, both ways.
describe('migration WebhooksDeletedInTheBackground', () => {
  const fixture = useDataSource();
  const migration = new WebhooksDeletedInTheBackground1763802700000();
  let runner: QueryRunner;

  beforeAll(() => {
    const r = (runner = fixture.db.createQueryRunner());
    fixture.adopt({ close: () => r.release() });
  });

  /** A webhook with two deliveries, one attempt that succeeded and one that failed. */
  const webhook = async (): Promise<string> => {
    const id = randomUUID();
    await runner.query(
      `INSERT INTO webhooks (id, name, url, events, secret_encrypted)
       VALUES ($1, 'w', 'http://127.0.0.1:9/', '{AccessRequestApproved}', 'x')`,
      [id],
    );
    for (const error of [null, 'timeout'])
      await runner.query(
        `WITH d AS (INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, event_occurred_at, status, attempt_count)
                    VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'AccessRequestApproved', now(), 'delivered', 1)
                    RETURNING id, event_occurred_at)
         INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, duration_ms, error, trigger, webhook_id, event_occurred_at)
         SELECT id, 1, now(), 5, $2, 'scheduled', $1, event_occurred_at FROM d`,
        [id, error],
      );
    return id;
  };
  const left = (id: string) => webhookRows(runner, id);
  const whole = { webhooks: 1, headers: 0, kept: 0, deliveries: 2, attempts: 2 };
  const none = { webhooks: 0, headers: 0, kept: 0, deliveries: 0, attempts: 0 };
  const triggerBody = async () =>
    (await runner.query(`SELECT prosrc FROM pg_proc WHERE proname = 'webhooks_delete_attempts'`))[0].prosrc as string;

  it('down purges the webhooks marked deleted and restores the trigger; up marks again; a delete takes every attempt', async () => {
    const marked = await webhook();
    const live = await webhook();
    await runner.query(`UPDATE webhooks SET deleted_at = now() WHERE id = $1`, [marked]);
    expect(await triggerBody()).toContain('error IS NOT NULL');

    await migration.down(runner);
    expect(await left(marked)).toEqual(none);
    expect(await left(live)).toEqual(whole);
    await expect(runner.query(`SELECT deleted_at FROM webhooks`)).rejects.toThrow(/deleted_at/);
    expect(await triggerBody()).not.toContain('error IS');
    await runner.query(`DELETE FROM webhooks WHERE id = $1`, [live]);
    expect(await left(live)).toEqual(none);

    await migration.up(runner);
    const again = await webhook();
    await runner.query(`UPDATE webhooks SET deleted_at = now() WHERE id = $1`, [again]);
    const [{ indexdef }] = await runner.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'webhooks_deleted'`);
    expect(indexdef).toContain('WHERE (deleted_at IS NOT NULL)');
    expect(await left(again)).toEqual(whole);
    await runner.query(`DELETE FROM webhooks WHERE id = $1`, [again]);
    expect(await left(again)).toEqual(none);
  });
});
