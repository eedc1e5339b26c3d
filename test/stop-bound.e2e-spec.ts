import { OwnRedis } from './helpers/own-redis';
import { ServiceProcess } from './helpers/service-process';
import { useTestEnv } from './helpers/use-service';

/**
 * A stop that cannot finish (here: its Redis froze, so the queue workers never close) still ends: 60 s after
 * SIGTERM the process says so and exits with 1, so a supervisor is not left waiting on it for ever.
 */
describe('a stop that hangs', () => {
  const env = useTestEnv();

  it('ends 60 s after SIGTERM, saying why, with exit code 1', async () => {
    const redis = env.adopt(await OwnRedis.start());
    const service = env.adopt(await ServiceProcess.start({ ...env.vars, REDIS_URL: redis.url, ROLE: 'all' }));
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
