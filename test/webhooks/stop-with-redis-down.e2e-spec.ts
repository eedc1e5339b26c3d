import { OwnRedis } from '../helpers/own-redis';
import { closeAfterEach } from '../helpers/use-fixture';
import { startService } from '../helpers/use-service';

/**
 * A worker stopped (SIGTERM) while its Redis refuses connections, as in a rollout during a Redis outage: the delivery
 * under way finishes and is recorded in Postgres, and the process then exits as a clean stop does. BullMQ's own
 * close cannot end while Redis is unreachable, so before, the stop waited out the 60 s bound and exited with 1.
 */
describe('a worker stopped while Redis is down', () => {
  const closer = closeAfterEach();

  it('lets the delivery under way finish and record itself, then exits of the signal', async () => {
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
    // the service's own stop and the spec's clean-up of queue keys need Redis back (this runs first)
    let down = false;
    closer.adopt({ close: async () => (down ? redis.up() : undefined) });
    const [worker] = t.processes;
    const w = await t.webhook({ Timeout: 30 });
    t.sink.responder = () => ({ status: 200, body: 'ok', delayMs: 3000 });
    const sent = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'under way' });
    expect(sent.status).toBe(202);
    await t.sink.waitFor((r) => r.length >= 1, 30_000, 'the delivery to be under way');

    await redis.down();
    down = true;
    const code = await worker.signalAndWait('SIGTERM');

    expect(worker.output).not.toContain('did not stop');
    expect(code).toBeNull(); // it died of the signal, as a clean stop does (1: the 60 s bound ended it)
    const delivery = await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${sent.body.DeliveryID}`);
    expect(delivery.body).toMatchObject({ Status: 'delivered', AttemptCount: 1 });
    expect(delivery.body.Attempts).toMatchObject([{ Number: 1, StatusCode: 200, Error: null }]);
  }, 150_000);
});
