import { request } from 'undici';
import { RECONCILE_GRACE_SECONDS, RECONCILE_INTERVAL_MS } from '../../src/webhooks/worker/reconciler';
import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { OwnRedis } from '../helpers/own-redis';
import { ServiceProcess } from '../helpers/service-process';
import { closeAfterEach } from '../helpers/use-fixture';
import { startService } from '../helpers/use-service';

/**
 * A worker stopped (SIGTERM) while its Redis refuses connections, as in a rollout during a Redis outage, or whose Redis
 * dies while it stops: the delivery under way finishes and is recorded in Postgres, and the process then exits as a
 * clean stop does. BullMQ's own close cannot end while Redis is unreachable, so before, the stop waited out the 60 s
 * bound and exited with 1.
 */
describe('a worker stopped while Redis is down', () => {
  const closer = closeAfterEach();

  /**
   * An API in process and a worker process on a Redis of the spec's own, and `redisDown`, which stops that Redis until
   * the spec ends (the service's own stop and the clean-up of queue keys need it back: brought up first).
   */
  const onOwnRedis = async () => {
    const redis = await OwnRedis.start();
    closer.adopt({ close: () => redis.down() });
    const t = closer.adopt(
      await startService({
        envVars: { REDIS_URL: redis.url },
        vars: { ROLE: 'api' },
        receiver: true,
        // its warnings kept: the relay says when it gave up queueing a job
        processes: [{ ROLE: 'worker', LOG_LEVEL: 'warn' }],
      }),
    );
    let down = false;
    closer.adopt({ close: async () => (down ? redis.up() : undefined) });
    const redisDown = async () => {
      await redis.down();
      down = true;
    };
    const redisUp = async () => {
      await redis.up();
      down = false;
    };
    return { t, worker: t.processes[0], redisDown, redisUp };
  };

  /** As onOwnRedis, with a delivery under way: its receiver answers after 3 s. */
  const withDeliveryUnderWay = async () => {
    const own = await onOwnRedis();
    const w = await own.t.webhook({ Timeout: 30 });
    own.t.sink.responder = () => ({ status: 200, body: 'ok', delayMs: 3000 });
    const sent = await own.t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'under way' });
    expect(sent.status).toBe(202);
    await own.t.sink.waitFor((r) => r.length >= 1, 30_000, 'the delivery to be under way');
    return { ...own, w, sent };
  };

  /** As onOwnRedis, with one delivery made while Redis was up (the worker's queue connections set up), then down. */
  const withOutage = async () => {
    const own = await onOwnRedis();
    const w = await own.t.webhook();
    expect((await own.t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'before' })).status).toBe(202);
    await own.t.sink.waitFor((r) => r.length >= 1, 30_000, 'the delivery before the outage');
    await own.redisDown();
    return { ...own, w };
  };

  /** Brings Redis back and waits, with a fresh worker process, for a delivery whose body holds `text`. */
  const deliveredOnceBack = async (own: Awaited<ReturnType<typeof onOwnRedis>>, text: string, what: string) => {
    await own.redisUp();
    const again = closer.adopt(await ServiceProcess.start({ ...own.t.env.vars, ROLE: 'worker' }));
    await own.t.sink.waitFor((r) => r.some((x) => x.body.includes(text)), 60_000, what);
    await again.close();
  };

  it('lets the delivery under way finish and record itself, then exits of the signal', async () => {
    const { t, worker, redisDown, w, sent } = await withDeliveryUnderWay();

    await redisDown();
    // stopped once the worker has seen Redis go (its readiness says so); Redis dying during the stop is the next test
    await eventually(
      async () => {
        const ready = await request(`http://127.0.0.1:${worker.port}/health/ready`);
        await ready.body.dump();
        return ready.statusCode === 503;
      },
      30_000,
      'the worker to see Redis down',
    );
    await stopsCleanly(worker, worker.signalAndWait('SIGTERM'));
    const delivery = await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${sent.body.DeliveryID}`);
    expect(delivery.body).toMatchObject({ Status: 'delivered', AttemptCount: 1 });
    expect(delivery.body.Attempts).toMatchObject([{ Number: 1, StatusCode: 200, Error: null }]);
  }, 150_000);

  it('lets the delivery under way finish when Redis dies during the stop, then exits of the signal', async () => {
    const { t, worker, redisDown, w, sent } = await withDeliveryUnderWay();

    // the stop begins with Redis up (BullMQ's own close, which waits for the job to be marked done in Redis), and
    // Redis dies while the delivery is still under way
    const exited = worker.signalAndWait('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await redisDown();
    await stopsCleanly(worker, exited);
    const delivery = await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${sent.body.DeliveryID}`);
    expect(delivery.body).toMatchObject({ Status: 'delivered', AttemptCount: 1 });
  }, 150_000);

  it('is not held up by deliveries overdue for the queue, which it delivers once Redis is back', async () => {
    const own = await withOutage();
    const { t, worker, w } = own;
    // committed while Redis is down: only the reconciler can queue it, and its passes find it overdue
    const sent = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'during the outage' });
    expect(sent.status).toBe(202);
    await eventually(
      async () =>
        (
          await t.db.query(
            `SELECT 1 FROM webhook_deliveries WHERE id = $1 AND next_attempt_at < now() - make_interval(secs => $2 + 2 * $3 / 1000.0)`,
            [sent.body.DeliveryID, RECONCILE_GRACE_SECONDS, RECONCILE_INTERVAL_MS],
          )
        ).length > 0,
      30_000,
      'the reconciler to have had passes over the overdue delivery',
    );
    await stopsCleanly(worker, worker.signalAndWait('SIGTERM'));
    await deliveredOnceBack(own, 'during the outage', 'the overdue delivery');
  }, 150_000);

  it('is not held up by the jobs its relay could not queue, which wait in the queue client for Redis', async () => {
    const own = await withOutage();
    const { t, worker } = own;
    // relayed while Redis is down: the relay gives up queueing the job after 2 s, but the client keeps the commands
    const event = await emitEvent(t, 'AccessRequestApproved', { ID: 1 });
    await eventually(
      async () => (await t.db.query(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1`, [event])).length > 0,
      30_000,
      'the relay to have made the delivery',
    );
    await eventually(
      async () => worker.output.includes('could not queue new deliveries'),
      30_000,
      'the relay to give up queueing the job',
    );
    await stopsCleanly(worker, worker.signalAndWait('SIGTERM'));
    await deliveredOnceBack(own, 'AccessRequestApproved', 'the relayed delivery');
  }, 150_000);
});

/** The stop `exited` ended as a clean stop does: of the signal (1 would be the 60 s bound ending it), in time. */
async function stopsCleanly(worker: ServiceProcess, exited: Promise<number | null>): Promise<void> {
  const code = await exited;
  expect(worker.output).not.toContain('did not stop');
  expect(code).toBeNull();
}
