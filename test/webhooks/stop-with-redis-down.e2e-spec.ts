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
        processes: [{ ROLE: 'worker' }],
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
    const code = await worker.signalAndWait('SIGTERM');

    expect(worker.output).not.toContain('did not stop');
    expect(code).toBeNull(); // it died of the signal, as a clean stop does (1: the 60 s bound ended it)
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
    const code = await exited;

    expect(worker.output).not.toContain('did not stop');
    expect(code).toBeNull();
    const delivery = await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${sent.body.DeliveryID}`);
    expect(delivery.body).toMatchObject({ Status: 'delivered', AttemptCount: 1 });
  }, 150_000);

  it('is not held up by deliveries overdue for the queue, which it delivers once Redis is back', async () => {
    const { t, worker, redisDown, redisUp } = await onOwnRedis();
    const w = await t.webhook();
    // up: the worker's queue connections are set up
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'before' })).status).toBe(202);
    await t.sink.waitFor((r) => r.length >= 1, 30_000, 'the delivery before the outage');

    await redisDown();
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
    const code = await worker.signalAndWait('SIGTERM');
    expect(worker.output).not.toContain('did not stop');
    expect(code).toBeNull();

    await redisUp();
    const again = closer.adopt(await ServiceProcess.start({ ...t.env.vars, ROLE: 'worker' }));
    await t.sink.waitFor((r) => r.some((x) => x.body.includes('during the outage')), 30_000, 'the overdue delivery');
    await again.close();
  }, 150_000);

  it('is not held up by the jobs its relay could not queue, which wait in the queue client for Redis', async () => {
    const { t, worker, redisDown, redisUp } = await onOwnRedis();
    const w = await t.webhook();
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'before' })).status).toBe(202);
    await t.sink.waitFor((r) => r.length >= 1, 30_000, 'the delivery before the outage');

    await redisDown();
    // relayed while Redis is down: the relay gives up queueing the job after 2 s, but the client keeps the commands
    const event = await emitEvent(t, 'AccessRequestApproved', { ID: 1 });
    await eventually(
      async () => (await t.db.query(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1`, [event])).length > 0,
      30_000,
      'the relay to have made the delivery',
    );
    await new Promise((r) => setTimeout(r, 3000));
    const code = await worker.signalAndWait('SIGTERM');
    expect(worker.output).not.toContain('did not stop');
    expect(code).toBeNull();

    await redisUp();
    const again = closer.adopt(await ServiceProcess.start({ ...t.env.vars, ROLE: 'worker' }));
    await t.sink.waitFor(
      (r) => r.some((x) => x.body.includes('AccessRequestApproved')),
      60_000,
      'the relayed delivery',
    );
    await again.close();
  }, 150_000);
});
