import { request } from 'undici';
import { OwnRedis } from './helpers/own-redis';
import { ServiceProcess } from './helpers/service-process';
import { useTestEnv } from './helpers/use-service';

/**
 * A stop that cannot finish (here: its Redis froze, so the queue workers never close) still ends: 60 s after
 * SIGTERM the process says so and exits with 1, so a supervisor is not left waiting on it for ever. Nor does a
 * Redis frozen from the start hold up the start, or turn the stop into a crash: BullMQ's connections, still being
 * set up, are closed under it.
 */
describe('a frozen Redis', () => {
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

  it('freezing under a running service: the stop ends 60 s after SIGTERM, saying why, with exit code 1', async () => {
    const redis = env.adopt(await OwnRedis.start());
    const service = env.adopt(await ServiceProcess.start({ ...env.vars, REDIS_URL: redis.url, ROLE: 'all' }));
    // the queue's connections are set up once /metrics can count its jobs
    for (let i = 0; i < 100; i++) {
      const res = await request(`http://127.0.0.1:${service.port}/metrics`);
      if ((await res.body.text()).includes('webhook_queue_depth{')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1000));
    redis.freeze();
    const stopping = Date.now();
    const code = await service.signalAndWait('SIGTERM');
    const tookMs = Date.now() - stopping;
    expect(service.output).toContain('did not stop within 60 s: exiting');
    expect(code).toBe(1);
    expect(tookMs).toBeGreaterThanOrEqual(59_000);
    expect(tookMs).toBeLessThan(80_000);
  }, 150_000);
});
