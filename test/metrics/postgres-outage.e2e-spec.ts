import { request } from 'undici';
import { BrokerProxy } from '../helpers/brokers';
import { ServiceProcess } from '../helpers/service-process';
import { useTestEnv } from '../helpers/use-service';

/**
 * While Postgres does not answer, a scrape of /metrics still answers at once with the HTTP and process metrics: the
 * gauges read from Postgres say they are unknown (NaN), instead of the whole scrape failing after the pool's wait.
 */
describe('/metrics while Postgres hangs', () => {
  const env = useTestEnv();

  it('answers within a scrape timeout, its database gauges NaN', async () => {
    const url = new URL(env.vars.DATABASE_URL);
    // the service reaches its database through a proxy that can hold back every answer
    const proxy = await BrokerProxy.start(Number(url.port || 5432));
    let svc: ServiceProcess | undefined;
    try {
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      svc = await ServiceProcess.start({ ...env.vars, DATABASE_URL: url.toString(), ROLE: 'api', PORT: '0' });
      const scrape = async () => {
        const started = Date.now();
        const res = await request(`http://127.0.0.1:${svc!.port}/metrics`);
        return { status: res.statusCode, text: await res.body.text(), ms: Date.now() - started };
      };
      const before = await scrape();
      expect(before.status).toBe(200);
      expect(before.text).toMatch(/^outbox_unrelayed_events 0$/m);

      proxy.delayMs = 120_000;
      const during = await scrape();
      expect(during.status).toBe(200);
      expect(during.ms).toBeLessThan(5_000);
      // prom-client writes Nan, which Prometheus reads as NaN (any case)
      expect(during.text).toMatch(/^outbox_unrelayed_events NaN$/im);
      expect(during.text).toMatch(/^webhook_oldest_pending_delivery_age_seconds NaN$/im);
      expect(during.text).toMatch(/^webhook_oldest_overdue_delivery_seconds NaN$/im);
      expect(during.text).toMatch(/^outbox_oldest_unrelayed_event_age_seconds NaN$/im);
      expect(during.text).toMatch(/^webhooks_awaiting_purge NaN$/im);
      expect(during.text).toMatch(/^webhook_oldest_awaiting_purge_seconds NaN$/im);
      expect(during.text).not.toMatch(/^webhooks_disabled\{/m);
      expect(during.text).toContain('http_requests_total');
      expect(during.text).toContain('process_cpu_seconds_total');
    } finally {
      // the held-back connections go with the proxy, so the service stops without waiting for them
      await proxy.close();
      await svc?.close();
    }
  }, 90_000);
});
