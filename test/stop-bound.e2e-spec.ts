import { request } from 'undici';
import { OwnRedis } from './helpers/own-redis';
import { TcpRelay } from './helpers/tcp-relay';
import { ServiceProcess } from './helpers/service-process';
import { useTestEnv } from './helpers/use-service';

/**
 * A stop that cannot finish still ends: SHUTDOWN_TIMEOUT (60 s unless set) after SIGTERM the process says so and
 * exits with 1, so a supervisor is not left waiting on it for ever (here: its PostgreSQL is cut off, connections
 * open, so its pools never close). A Redis that freezes does not hold a stop up that long: the first of BullMQ's
 * closes waits 5 s for it, then every close drops its connections. Nor does a Redis frozen from the start hold up the
 * start, or turn the stop into a crash: BullMQ's connections, still being set up, are closed under it.
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

  it('a PostgreSQL cut off under a running service: the stop ends SHUTDOWN_TIMEOUT after SIGTERM, saying why, with exit code 1', async () => {
    const url = new URL(env.vars.DATABASE_URL);
    const relay = env.adopt(await TcpRelay.start({ host: url.hostname, port: Number(url.port || 5432) }));
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    // a bound shorter than the default: what is checked is that the bound ends the stop, not how long it is
    const vars = { ...env.vars, DATABASE_URL: url.href, ROLE: 'all', SHUTDOWN_TIMEOUT: '3s' };
    const service = env.adopt(await ServiceProcess.start(vars));
    await queueConnected(service);
    relay.silence();
    const { code, tookMs } = await stopped(service);
    expect(service.output).toContain('did not stop within 3 s (SHUTDOWN_TIMEOUT): exiting');
    expect(code).toBe(1);
    expect(tookMs).toBeGreaterThanOrEqual(2_500);
    expect(tookMs).toBeLessThan(30_000);
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
