import { createServer, connect, Server, Socket } from 'node:net';
import { BUSY_RETRY_AFTER_SECONDS } from '../src/common/errors';
import { portalClient } from './helpers/portal';
import { startTestApp } from './helpers/test-app';
import { useTestEnv } from './helpers/use-service';

/**
 * A TCP proxy to Postgres that can be frozen: its connections are cut, and the ones opened after are accepted and
 * never answered, as a host that froze, or a Postgres that stopped answering, leaves them.
 */
class FreezableProxy {
  private frozen = false;
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server) {}

  static async start(target: { host: string; port: number }): Promise<FreezableProxy> {
    const proxy: FreezableProxy = new FreezableProxy(
      createServer((client) => {
        proxy.track(client);
        if (proxy.frozen) return;
        const upstream = proxy.track(connect(target.port, target.host));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
      }),
    );
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  freeze(): void {
    this.frozen = true;
    this.cut();
  }

  thaw(): void {
    this.frozen = false;
    this.cut();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  private track(s: Socket): Socket {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
    return s;
  }
}

/**
 * A request whose database connection cannot be opened within the pool's wait (10 s: Postgres accepts no
 * connection, or accepts and never answers) is answered 503 with Retry-After in its family's body, as when every
 * connection is taken (pool-exhausted.e2e-spec.ts), not 500; and the service answers again once Postgres does.
 */
describe('a request whose database connection cannot be opened in time', () => {
  const env = useTestEnv();

  it('is answered 503 with Retry-After, and the service recovers with the database', async () => {
    const target = new URL(env.databaseUrl);
    const proxy = env.adopt(await FreezableProxy.start({ host: target.hostname, port: Number(target.port || 5432) }));
    const proxied = new URL(env.databaseUrl);
    proxied.port = String(proxy.port);
    const t = env.adopt(await startTestApp({ env, vars: { ROLE: 'api', DATABASE_URL: proxied.toString() } }));
    const portal = portalClient(t);
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);

    proxy.freeze();
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

    proxy.thaw();
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);
  }, 60_000);
});
