import { BUSY_RETRY_AFTER_SECONDS } from '../src/common/errors';
import { portalClient } from './helpers/portal';
import { TcpRelay } from './helpers/tcp-relay';
import { startTestApp } from './helpers/test-app';
import { useTestEnv } from './helpers/use-service';

/**
 * A request whose database connection cannot be opened within the pool's wait (10 s: Postgres accepts no
 * connection, or accepts and never answers) is answered 503 with Retry-After in its family's body, as when every
 * connection is taken (pool-exhausted.e2e-spec.ts), not 500; and the service answers again once Postgres does.
 */
describe('a request whose database connection cannot be opened in time', () => {
  const env = useTestEnv();

  it('is answered 503 with Retry-After, and the service recovers with the database', async () => {
    const target = new URL(env.databaseUrl);
    const relay = env.adopt(await TcpRelay.start({ host: target.hostname, port: Number(target.port || 5432) }));
    const proxied = new URL(env.databaseUrl);
    proxied.port = String(relay.port);
    const t = env.adopt(await startTestApp({ env, vars: { ROLE: 'api', DATABASE_URL: proxied.toString() } }));
    const portal = portalClient(t);
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);

    relay.freeze();
    const [p, d] = await Promise.all([
      portal.get('/portal-api/webhooks'),
      t.http.get('/api/apis', { authorization: 'Bearer 0123456789abcdef0123456789abcdef' }),
    ]);
    const message = `the service is busy: no database connection came free in time; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`;
    expect({ status: p.status, retryAfter: p.headers['retry-after'], body: p.body }).toEqual({
      status: 503,
      retryAfter: String(BUSY_RETRY_AFTER_SECONDS),
      body: { status: 'error', errors: [message] },
    });
    expect({ status: d.status, retryAfter: d.headers['retry-after'], body: d.body }).toEqual({
      status: 503,
      retryAfter: String(BUSY_RETRY_AFTER_SECONDS),
      body: { Status: 'Error', Message: message, Meta: null },
    });

    relay.thaw();
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);
  }, 60_000);
});
