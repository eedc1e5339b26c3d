import { randomUUID } from 'node:crypto';
import { useService } from '../helpers/use-service';

/** The value of one sample of a Prometheus text exposition, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('HTTP metrics on /metrics', () => {
  const t = useService();

  it('counts requests by method, route template and status, with a duration histogram', async () => {
    const missing = randomUUID();
    expect((await t.portal.get('/portal-api/webhooks')).status).toBe(200);
    expect((await t.portal.get('/portal-api/webhooks')).status).toBe(200);
    expect((await t.portal.get(`/portal-api/webhooks/${missing}`)).status).toBe(404);
    expect((await t.http.get('/portal-api/webhooks')).status).toBe(401);
    expect((await t.http.get(`/no-such-route/${missing}`)).status).toBe(404);

    const res = await t.http.get('/metrics');
    expect(res.status).toBe(200);
    const text = res.text;
    expect(
      sample(text, 'http_requests_total', { method: 'GET', route: '/portal-api/webhooks', status_code: '200' }),
    ).toBe(2);
    expect(
      sample(text, 'http_requests_total', { method: 'GET', route: '/portal-api/webhooks', status_code: '401' }),
    ).toBe(1);
    expect(
      sample(text, 'http_requests_total', { method: 'GET', route: '/portal-api/webhooks/:id', status_code: '404' }),
    ).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(
      sample(text, 'http_request_duration_seconds_count', {
        method: 'GET',
        route: '/portal-api/webhooks',
        status_code: '200',
      }),
    ).toBe(2);
    expect(
      sample(text, 'http_request_duration_seconds_bucket', {
        method: 'GET',
        route: '/portal-api/webhooks',
        status_code: '200',
        le: '+Inf',
      }),
    ).toBe(2);
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
    // concrete paths never become labels
    expect(text).not.toContain(missing);
    // beside the delivery metrics and process defaults
    expect(text).toMatch(/^# TYPE webhook_queue_depth gauge$/m);
    expect(text).toMatch(/^# TYPE process_cpu_seconds_total counter$/m);
  });

  it('counts the requests the router refuses, and answers them with an id and the family headers', async () => {
    const badEscape = await t.http.get('/portal-api/apps/%zz');
    expect(badEscape.status).toBe(400);
    const longSegment = await t.http.get(`/portal-api/apps/${'a'.repeat(1100)}`);
    expect(longSegment.status).toBe(414);
    for (const res of [badEscape, longSegment]) {
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }

    const text = (await t.http.get('/metrics')).text;
    expect(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status_code: '400' })).toBe(1);
    expect(sample(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status_code: '414' })).toBe(1);
    expect(text).not.toContain('aaaa');
  });
});
