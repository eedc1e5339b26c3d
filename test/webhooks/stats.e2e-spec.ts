import { emitEvent } from '../helpers/events';
import { createWebhook, RFC3339 } from '../helpers/portal';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

describe('GET /portal-api/webhooks/{id}/stats', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,0,0' }, receiver: true });

  const webhook = async (path: string, events = ['AccessRequestApproved']): Promise<string> =>
    (await createWebhook(t.portal, { Name: 's', URL: t.sink.url(path), Events: events })).ID;
  const settled = (webhookId: string, n: number) =>
    eventually(
      async () => {
        const [row] = await t.db.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND status <> 'pending'`,
          [webhookId],
        );
        return row.n === n;
      },
      20_000,
      `${n} settled deliveries`,
    );

  it('counts deliveries by status in the window, with success rate, latency percentiles, the last success and the last failure', async () => {
    t.sink.responder = (r) => {
      if (r.url !== '/mixed') return { status: 200 };
      return JSON.parse(r.body).Message.ID === 2
        ? { status: 500, body: 'boom' }
        : { status: 200, body: 'ok', delayMs: 30 };
    };
    const id = await webhook('/mixed');
    const before = Date.now();
    for (const ID of [1, 2, 3]) await emitEvent(t, 'AccessRequestApproved', { ID });
    await settled(id, 3);

    const res = await t.portal.get(`/portal-api/webhooks/${id}/stats`);
    expect(res.status).toBe(200);
    const [attempts] = await t.db.query(
      `SELECT count(*)::int AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95,
              max(started_at) FILTER (WHERE error IS NULL) AS ok, max(started_at) FILTER (WHERE error IS NOT NULL) AS bad
         FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
      [id],
    );
    expect(attempts.n).toBe(5);
    expect(res.body).toEqual({
      WebhookID: id,
      Since: expect.stringMatching(RFC3339),
      Until: expect.stringMatching(RFC3339),
      Delivered: 2,
      Failed: 1,
      Pending: 0,
      Retrying: 0,
      SuccessRate: 0.6667,
      Attempts: 5,
      LatencyP50Ms: Math.round(attempts.p50),
      LatencyP95Ms: Math.round(attempts.p95),
      LastSuccessAt: attempts.ok.toISOString(),
      LastFailure: { At: attempts.bad.toISOString(), StatusCode: 500, Error: 'http_status', ResponseBody: 'boom' },
    });
    expect(res.body.LatencyP95Ms).toBeGreaterThanOrEqual(30);
    // the default window is the last 24 hours
    const since = new Date(res.body.Since).getTime();
    expect(new Date(res.body.Until).getTime() - since).toBe(24 * 3600 * 1000);
    expect(since).toBeLessThan(before);

    // a window after all of it: nothing in it, but the last success and failure stay
    const later = await t.portal.get(
      `/portal-api/webhooks/${id}/stats?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
    );
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({
      Delivered: 0,
      Failed: 0,
      Pending: 0,
      Retrying: 0,
      SuccessRate: null,
      Attempts: 0,
      LatencyP50Ms: null,
      LatencyP95Ms: null,
    });
    expect(later.body.LastSuccessAt).toBe(res.body.LastSuccessAt);
    expect(later.body.LastFailure).toEqual(res.body.LastFailure);
  });

  it('tells deliveries waiting for a retry from those not attempted yet', async () => {
    t.sink.responder = (r) =>
      r.url === '/later' ? { status: 503, headers: { 'retry-after': '3600' } } : { status: 200 };
    // ordered: the second delivery waits, unattempted, behind the first one, which waits for its retry
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: 'o',
      URL: t.sink.url('/later'),
      Events: ['AccessRequestRejected'],
      Ordered: true,
    });
    const id = res.body.ID;
    await emitEvent(t, 'AccessRequestRejected', { ID: 1 });
    await emitEvent(t, 'AccessRequestRejected', { ID: 2 });
    await eventually(
      async () => {
        const rows = await t.db.query(
          `SELECT attempt_count FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY event_seq`,
          [id],
        );
        return rows.length === 2 && rows[0].attempt_count === 1;
      },
      15_000,
      'a first attempt',
    );
    const stats = (await t.portal.get(`/portal-api/webhooks/${id}/stats`)).body;
    expect(stats).toMatchObject({
      Delivered: 0,
      Failed: 0,
      Pending: 1,
      Retrying: 1,
      SuccessRate: null,
      Attempts: 1,
      LastSuccessAt: null,
    });
    expect(stats.LastFailure).toMatchObject({ StatusCode: 503, Error: 'http_status' });
  });

  it('answers 404 for an unknown or malformed id and 422 naming since for a since that is not an RFC 3339 date-time with seconds and an offset', async () => {
    const id = await webhook('/x');
    expect((await t.portal.get(`/portal-api/webhooks/00000000-0000-4000-8000-000000000000/stats`)).status).toBe(404);
    const malformed = await t.portal.get(`/portal-api/webhooks/nope/stats`);
    expect(malformed.status).toBe(404);
    expect(malformed.body).toEqual({ status: 'error', errors: [expect.any(String)] });
    // a date alone or a time without an offset would be read in the server's time zone: refused
    for (const since of [
      'yesterday',
      '2026-13-01T00:00:00Z',
      '1700000000',
      '2026-11-22',
      '2026-11-22T10:00:00',
      '2026-11-22T10:00Z',
      '2026-02-30T00:00:00Z',
    ]) {
      const bad = await t.portal.get(`/portal-api/webhooks/${id}/stats?since=${encodeURIComponent(since)}`);
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({
        status: 'error',
        errors: ['since must be an RFC 3339 date-time with seconds and a time zone, e.g. 2026-11-22T10:00:00Z'],
      });
    }
    expect((await t.http.get(`/portal-api/webhooks/${id}/stats`)).status).toBe(401);
    const withOffset = await t.portal.get(`/portal-api/webhooks/${id}/stats?since=2026-01-01T00:00:00%2B02:00`);
    expect(withOffset.status).toBe(200);
    expect(withOffset.body.Since).toBe('2025-12-31T22:00:00.000Z');
    // lower case, a space for T, and a leap second are RFC 3339 too
    for (const [since, read] of [
      ['2026-01-01t10:00:00.25z', '2026-01-01T10:00:00.250Z'],
      ['2026-01-01 10:00:00Z', '2026-01-01T10:00:00.000Z'],
      ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ]) {
      const ok = await t.portal.get(`/portal-api/webhooks/${id}/stats?since=${encodeURIComponent(since)}`);
      expect(ok.status).toBe(200);
      expect(ok.body.Since).toBe(read);
    }
  });

  it('is documented in /docs-json with the new webhook fields and the operational events as callbacks', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const op = doc.paths['/portal-api/webhooks/{id}/stats'].get;
    expect(op).toMatchObject({ operationId: 'getWebhookStats', summary: expect.any(String) });
    expect(op.parameters.map((p: any) => p.name).sort()).toEqual(['id', 'since']);
    const stats = doc.components.schemas.WebhookStatsResponse.properties;
    expect(Object.keys(stats).sort()).toEqual(
      [
        'WebhookID',
        'Since',
        'Until',
        'Delivered',
        'Failed',
        'Pending',
        'Retrying',
        'SuccessRate',
        'Attempts',
        'LatencyP50Ms',
        'LatencyP95Ms',
        'LastSuccessAt',
        'LastFailure',
      ].sort(),
    );
    const webhook = doc.components.schemas.WebhookResponse.properties;
    expect(webhook).toMatchObject({
      DisabledReason: { nullable: true },
      DisabledAt: { nullable: true },
      RateLimit: { nullable: true },
      Ordered: { type: 'boolean' },
    });
    expect(doc.components.schemas.CreateWebhookDto.properties).toMatchObject({
      RateLimit: { minimum: 1, maximum: 10000 },
      Ordered: { type: 'boolean' },
    });
    const callbacks = doc.paths['/portal-api/webhooks'].post.callbacks;
    for (const event of ['WebhookDisabled', 'DeliveryFailed', 'WebhookEnabled']) expect(callbacks[event]).toBeDefined();
    expect(doc.components.schemas.WebhookDisabledMessage.properties.WebhookID).toMatchObject({
      type: 'string',
      format: 'uuid',
    });
  });

  it('is served from indexes at scale: index-only scans for the counts and the latency, no scan of the webhook history', async () => {
    const id = await webhook('/big');
    // 100 000 deliveries over 18.5 days, and an attempt each (1 in 10 a failure), in the partitions of their days
    // (a fresh database has those of yesterday on, as retention keeps them)
    await t.db.query(
      `SELECT delivery_log_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 19, (now() AT TIME ZONE 'UTC')::date)`,
    );
    await t.db.query(
      `WITH e AS (INSERT INTO outbox_events (id, name, payload, occurred_at, relayed_at)
                  SELECT gen_random_uuid(), 'AccessRequestApproved', '{}', now() - (g * interval '16 seconds'), now() FROM generate_series(1, 100000) g
                  RETURNING id, occurred_at),
            d AS (INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, status, attempt_count, created_at, updated_at, event_occurred_at)
                  SELECT gen_random_uuid(), $1, e.id, 'AccessRequestApproved', 'delivered', 1, e.occurred_at, e.occurred_at, e.occurred_at FROM e
                  RETURNING id, created_at, event_occurred_at)
       INSERT INTO webhook_delivery_attempts (delivery_id, webhook_id, number, started_at, status_code, duration_ms, error, trigger, event_occurred_at)
       SELECT d.id, $1, 1, d.created_at, CASE WHEN random() < 0.1 THEN 500 ELSE 200 END, (random() * 200)::int, NULL, 'scheduled', d.event_occurred_at FROM d`,
      [id],
    );
    await t.db.query(
      `UPDATE webhook_delivery_attempts SET error = 'http_status' WHERE webhook_id = $1 AND status_code = 500`,
      [id],
    );
    await t.db.query(`VACUUM ANALYZE webhook_deliveries`);
    await t.db.query(`VACUUM ANALYZE webhook_delivery_attempts`);

    const res = await t.portal.get(`/portal-api/webhooks/${id}/stats`);
    expect(res.status).toBe(200);
    expect(res.body.Delivered).toBeGreaterThan(5000);
    expect(res.body.Delivered).toBeLessThan(5500); // the last 24 h only

    // the log tables are partitioned by day: a plan names each partition's own copy of an index
    const partsOf = async (index: string): Promise<string> => {
      const rows: { name: string }[] = await t.db.query(
        `WITH RECURSIVE i(oid) AS (SELECT $1::regclass::oid UNION ALL SELECT h.inhrelid FROM pg_inherits h JOIN i ON h.inhparent = i.oid)
         SELECT c.relname AS name FROM i JOIN pg_class c ON c.oid = i.oid`,
        [index],
      );
      return `(?:${rows.map((r) => r.name).join('|')})`;
    };
    const [stats, ok, failed] = [
      await partsOf('webhook_deliveries_stats'),
      await partsOf('webhook_delivery_attempts_ok'),
      await partsOf('webhook_delivery_attempts_failed'),
    ];
    const plan = async (sql: string) =>
      (await t.db.query<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${sql}`, [id, new Date(Date.now() - 24 * 3600 * 1000)]))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    const counts = await plan(
      `SELECT count(*) FILTER (WHERE status = 'delivered') FROM webhook_deliveries WHERE webhook_id = $1 AND created_at >= $2`,
    );
    expect(counts).toMatch(new RegExp(`Index Only Scan using ${stats} `));
    const latency = await plan(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FROM (
         SELECT duration_ms FROM webhook_delivery_attempts WHERE webhook_id = $1 AND started_at >= $2 AND error IS NULL
         UNION ALL SELECT duration_ms FROM webhook_delivery_attempts WHERE webhook_id = $1 AND started_at >= $2 AND error IS NOT NULL) a`,
    );
    expect(latency).toMatch(new RegExp(`Index Only Scan using ${ok} `));
    expect(latency).toMatch(new RegExp(`Index Only Scan using ${failed} `));
    const last = await plan(
      `SELECT started_at FROM webhook_delivery_attempts WHERE webhook_id = $1 AND error IS NULL AND $2::timestamptz IS NOT NULL ORDER BY started_at DESC LIMIT 1`,
    );
    expect(last).toMatch(new RegExp(`Index (Only )?Scan Backward using ${ok} `));
    // the same index serves the delivery log, newest first
    const log = await plan(
      `SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND $2::timestamptz IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 10 OFFSET 20`,
    );
    expect(log).toMatch(new RegExp(`Index (Only )?Scan Backward using ${stats} `));
  }, 120_000);
});
