import { request } from 'undici';
import { OwnRedis } from './helpers/own-redis';
import { TcpRelay } from './helpers/tcp-relay';
import { ServiceProcess } from './helpers/service-process';
import { closeAfterEach } from './helpers/use-fixture';
import { startService, useTestEnv } from './helpers/use-service';

/**
 * A peer that stops answering does not hold a stop up until SHUTDOWN_TIMEOUT. A Redis that freezes: the first of
 * BullMQ's closes waits 5 s for it, then every close drops its connections; nor does a Redis frozen from the start
 * hold up the start, or turn the stop into a crash: BullMQ's connections, still being set up, are closed under it. A
 * PostgreSQL cut off with its connections open: its statements fail once DATABASE_STATEMENT_TIMEOUT's bound is past,
 * and its connections' closes are cut after a second.
 */
describe('a stop held up by a peer that does not answer', () => {
  const env = useTestEnv();

  it('neither holds up the start nor crashes the stop', async () => {
    const redis = env.adopt(await OwnRedis.start());
    redis.freeze();
    const service = env.adopt(await ServiceProcess.start({ ...env.vars, REDIS_URL: redis.url, ROLE: 'all' }));
    const ready = await request(`http://127.0.0.1:${service.port}/health/ready`);
    await ready.body.text();
    expect(ready.statusCode).toBe(503);
    const code = await service.signalAndWait('SIGTERM');
    expect(service.output).not.toContain('Connection is closed');
    expect(service.output).not.toContain('did not stop');
    expect(code).toBeNull(); // it died of the signal, as without a handler: a clean stop
  }, 90_000);

  it('freezing under a running service: the stop drops its connections and exits of the signal', async () => {
    const redis = env.adopt(await OwnRedis.start());
    const vars = { ...env.vars, REDIS_URL: redis.url, ROLE: 'all', LOG_LEVEL: 'warn' };
    const service = env.adopt(await ServiceProcess.start(vars));
    await queueConnected(service);
    redis.freeze();
    const { code, tookMs } = await stopped(service);
    expect(service.output).not.toContain('did not stop');
    expect(code).toBeNull(); // it died of the signal, as without a handler: a clean stop
    // the first of the process's three BullMQ closes (worker, queue, queue board) waits 5 s for Redis, then 0.5 s for
    // its drop; the two after it drop their connections without waiting again
    expect(service.output).toContain("did not answer the worker's close within 5000 ms: dropping it");
    expect(service.output).toContain("left an earlier close of this stop unanswered: dropping the queue's connection");
    expect(tookMs).toBeLessThan(40_000);
  }, 150_000);

  it('a PostgreSQL cut off under a running service: its statements and connections are given up, and the stop ends as a clean one', async () => {
    const url = new URL(env.vars.DATABASE_URL);
    const relay = env.adopt(await TcpRelay.start({ host: url.hostname, port: Number(url.port || 5432) }));
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    // a bound shorter than the default; SHUTDOWN_TIMEOUT longer than what the stop is given here
    const vars = { ...env.vars, DATABASE_URL: url.href, ROLE: 'all', DATABASE_STATEMENT_TIMEOUT: '1s' };
    const service = env.adopt(await ServiceProcess.start(vars));
    await queueConnected(service);
    relay.silence();
    const { code } = await stopped(service);
    // before the connections' closes were bounded, their goodbye waited for ever and the stop for SHUTDOWN_TIMEOUT
    expect(service.output).not.toContain('did not stop');
    expect(code).toBeNull(); // it died of the signal, as without a handler: a clean stop
  }, 150_000);
});

/**
 * A stop that cannot finish still ends: SHUTDOWN_TIMEOUT after SIGTERM the process says so and exits with 1, so a
 * supervisor is not left waiting on it for ever. Here a worker waits for the delivery under way, whose receiver
 * answers only after the bound.
 */
describe('a stop held up past SHUTDOWN_TIMEOUT', () => {
  const closer = closeAfterEach();

  it('ends SHUTDOWN_TIMEOUT after SIGTERM, saying why, with exit code 1', async () => {
    // a bound shorter than the default: what is checked is that the bound ends the stop, not how long it is
    const t = closer.adopt(
      await startService({
        vars: { ROLE: 'api' },
        receiver: true,
        processes: [{ ROLE: 'worker', SHUTDOWN_TIMEOUT: '3s' }],
      }),
    );
    const w = await t.webhook({ Timeout: 30 });
    t.sink.responder = () => ({ status: 200, body: 'ok', delayMs: 8_000 });
    expect((await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'held' })).status).toBe(202);
    await t.sink.waitFor((r) => r.length >= 1, 30_000, 'the delivery to be under way');
    const worker = t.processes[0];
    const { code, tookMs } = await stopped(worker);
    expect(worker.output).toContain('did not stop within 3 s (SHUTDOWN_TIMEOUT): exiting');
    expect(code).toBe(1);
    expect(tookMs).toBeGreaterThanOrEqual(2_500);
  }, 90_000);
});

/** SIGTERM, then its exit code (null when the signal ended it) and how long it took to come. */
async function stopped(service: ServiceProcess): Promise<{ code: number | null; tookMs: number }> {
  const stopping = Date.now();
  const code = await service.signalAndWait('SIGTERM');
  return { code, tookMs: Date.now() - stopping };
}

/** Waits until the service's queue connections are set up (/metrics can count its jobs), and a moment more. */
async function queueConnected(service: ServiceProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await request(`http://127.0.0.1:${service.port}/metrics`);
    if ((await res.body.text()).includes('webhook_queue_depth{')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1000));
}
