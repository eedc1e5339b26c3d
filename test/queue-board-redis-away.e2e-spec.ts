import { ENV_REDIS_URL } from './setup/test-infra';
import { TcpRelay } from './helpers/tcp-relay';
import { TEST_SECRETS } from './helpers/test-env';
import { closeAfterEach } from './helpers/use-fixture';
import { startService } from './helpers/use-service';

/**
 * Bull Board's API talks to Redis, whose client keeps each command until Redis is back: without a bound a call
 * waited as long as the outage lasted, and for ever while Redis was frozen. It is a 503 with Retry-After instead.
 */
describe('Bull Board while Redis is away', () => {
  const closer = closeAfterEach();
  const basic = { authorization: `Basic ${Buffer.from(`ops:${TEST_SECRETS.ADMIN_SECRET}`).toString('base64')}` };

  it.each([
    ['frozen (its connections open, nothing answered)', (r: TcpRelay) => r.silence()],
    ['refusing connections', (r: TcpRelay) => r.refuse()],
  ])(
    'answers a call of its API 503 with Retry-After when Redis is %s',
    async (_how, away) => {
      const redisUrl = new URL(process.env[ENV_REDIS_URL]!);
      const relay = await TcpRelay.start({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
      const viaRelay = new URL(redisUrl);
      viaRelay.hostname = '127.0.0.1';
      viaRelay.port = String(relay.port);
      const t = await startService({ envVars: { REDIS_URL: viaRelay.toString() } });
      // the relay is thawed before the app closes (closeAfterEach closes in reverse), so the app stops as usual
      closer.adopt({ close: () => relay.close() });
      closer.adopt({ close: () => t.close() });
      closer.adopt({ close: async () => relay.thaw() });
      expect((await t.http.get('/queues/api/queues', basic)).status).toBe(200);

      away(relay);
      const res = await t.http.get('/queues/api/queues', basic);
      expect({ status: res.status, retryAfter: res.headers['retry-after'] }).toEqual({ status: 503, retryAfter: '5' });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body.error).toMatch(/Redis did not answer/);
    },
    60_000,
  );
});
