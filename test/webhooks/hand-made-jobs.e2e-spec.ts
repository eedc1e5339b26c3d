import type { Job } from 'bullmq';
import { DELIVERY_JOB, DeliveryQueue } from '../../src/webhooks/delivery.queue';
import { DeliveryProcessor } from '../../src/webhooks/worker/delivery.processor';
import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

describe('jobs added by hand on the queue board', () => {
  const t = useService({ receiver: true });

  it('drops a job that names no delivery, and the deliveries claimed beside it go out at once', async () => {
    const hooks = await Promise.all(Array.from({ length: 12 }, () => t.webhook()));
    const queue = t.app.get(DeliveryQueue).queue;
    const failed: string[] = [];
    const onFailed = (job: Job | undefined, err: Error) => failed.push(`${job?.id}: ${err.message}`);
    const worker = t.app.get(DeliveryProcessor).worker;
    worker.on('failed', onFailed);
    try {
      // what the board's "add job" or "edit data" can make: ids that are not ids, a partition key that is no time
      const webhookId = hooks[0].ID;
      const deliveryId = '7b0a3c1e-2f4d-4e5a-9b6c-1d2e3f4a5b6c';
      const made = await queue.addBulk(
        [
          { deliveryId: 'not-a-delivery', webhookId },
          { deliveryId, webhookId: 'nobody' },
          { deliveryId, webhookId, at: 'yesterday' },
          { a: 1 },
        ].flatMap((data) => Array.from({ length: 8 }, () => ({ name: DELIVERY_JOB, data: data as never }))),
      );
      await emitEvent(t, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });
      // the deliveries go out on their first job: none waits for the reconciler after its claim failed
      await t.sink.waitFor((r) => r.length >= hooks.length, 10_000);
      const states = await eventually(async () => {
        const s = await Promise.all(made.map((j) => j.getState()));
        return s.every((x) => x === 'completed' || x === 'failed') ? s : null;
      });
      expect(new Set(states)).toEqual(new Set(['completed']));
      expect(failed).toEqual([]);
      // each attempt is recorded once its answer is in, a moment after the receiver has it
      const rows = await eventually(async () => {
        const r: { status: string; attempt_count: number }[] = await t.db.query(
          `SELECT status, attempt_count FROM webhook_deliveries`,
        );
        return r.every((d) => d.status !== 'pending') ? r : null;
      });
      expect(rows).toHaveLength(hooks.length);
      for (const r of rows) expect(r).toEqual({ status: 'delivered', attempt_count: 1 });
    } finally {
      worker.off('failed', onFailed);
    }
  });
});
