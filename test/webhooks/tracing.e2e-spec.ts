import { Client } from 'pg';
import { HttpClient } from '../helpers/http';
import { OtlpReceiver, ReceivedSpan } from '../helpers/otlp-receiver';
import { ServiceProcess } from '../helpers/service-process';
import { eventually, Sink } from '../helpers/sink';
import { createTestEnv, TEST_SECRETS, TestEnv } from '../helpers/test-env';

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

/**
 * Tracing as `npm start` runs it: an api process and a worker process, configured only by the standard
 * OTEL_ variables, export to an OTLP receiver the test runs on loopback. One approval must be one trace
 * from the HTTP request, through the outbox row (Postgres) and the queue job (Redis), to every attempt.
 */
describe('OpenTelemetry tracing', () => {
  let env: TestEnv;
  let receiver: OtlpReceiver;
  let sink: Sink;
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    sink = await Sink.start();
    env = await createTestEnv({ WEBHOOK_RETRY_SCHEDULE: '0,1,1' });
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    [api, worker] = await Promise.all([
      ServiceProcess.start({ ...env.vars, ...otel, ROLE: 'api', OTEL_SERVICE_NAME: 'gw-api' }),
      ServiceProcess.start({ ...env.vars, ...otel, ROLE: 'worker', OTEL_SERVICE_NAME: 'gw-worker' }),
    ]);
  });
  afterAll(async () => {
    await api?.kill('SIGTERM');
    await worker?.kill('SIGTERM');
    await sink.close();
    await receiver.close();
    await env.drop();
  });

  it('follows an approval from the HTTP request through the outbox and the queue to each delivery attempt, in one trace', async () => {
    const portal = new HttpClient(`http://127.0.0.1:${api!.port}`, { authorization: TEST_SECRETS.PORTAL_API_TOKEN });
    // the first attempt meets a 503, the retry a 200: two attempt spans
    sink.responder = (_req, index) => (index === 0 ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' });
    const hook = await portal.post('/portal-api/webhooks', { Name: 'traced', URL: sink.url('/traced'), Events: ['AccessRequestApproved'] });
    expect(hook.status).toBe(201);
    const app = await portal.post('/portal-api/apps', { Name: 'Traced app', UserID: 1 });
    expect(app.status).toBe(200);
    const ar = await portal.post('/portal-api/access_requests', { AppID: app.body.ID, Catalogue: 'c', Plan: 'p', Products: ['weather-api'], AuthType: 'authToken', User: 'User#1' });
    expect(ar.status).toBe(201);
    expect((await portal.put(`/portal-api/access_requests/${ar.body.ID}/approve`)).status).toBe(200);

    await sink.waitForCount(2, 20_000);
    const [delivery] = (await portal.get(`/portal-api/webhooks/${hook.body.ID}/deliveries`)).body;
    expect(delivery.Status).toBe('delivered');

    const approval = await eventually(
      async () => receiver.spans.find((s) => s.kind === SERVER && s.attributes['http.route'] === '/portal-api/access_requests/:id/approve'),
      15_000,
      'the server span of the approval',
    );
    expect(approval).toMatchObject({ service: 'gw-api', name: 'PUT /portal-api/access_requests/:id/approve', parentSpanId: '' });
    const attemptsOf = (spans: ReceivedSpan[]) => spans.filter((s) => s.name === 'deliver AccessRequestApproved');
    const spans = await eventually(async () => {
      const all = receiver.trace(approval.traceId);
      return attemptsOf(all).length >= 2 ? all : undefined;
    }, 15_000, 'both attempt spans in the approval trace');
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ancestry = (s: ReceivedSpan): ReceivedSpan[] => {
      const chain: ReceivedSpan[] = [];
      for (let p = byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) chain.push(p);
      return chain;
    };

    // the request's own work: Nest's handler and the transaction's statements, the outbox row among them
    const isPostgres = (s: ReceivedSpan) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql';
    expect(spans.some((s) => s.service === 'gw-api' && isPostgres(s) && /INSERT INTO outbox_events/.test(String(s.attributes['db.query.text'] ?? s.attributes['db.statement'])))).toBe(true);
    if (process.env.TRACE_DUMP) console.log(spans.map((s) => `${s.service} ${s.spanId} <- ${s.parentSpanId || '-'} ${s.name} ${JSON.stringify(s.attributes).slice(0, 200)}`).join('\n'));

    // the relay, in the worker process, continues the context stored in the outbox row
    const relays = spans.filter((s) => s.name === 'relay AccessRequestApproved');
    expect(relays).toHaveLength(1);
    const relay = relays[0];
    expect(relay).toMatchObject({ service: 'gw-worker', kind: PRODUCER });
    expect(relay.attributes).toMatchObject({ 'webhook.event.name': 'AccessRequestApproved', 'messaging.destination.name': 'deliveries', 'messaging.batch.message_count': 1 });
    expect(ancestry(relay)).toContainEqual(approval);

    // each attempt: a child of the relay (through the job), with its status code, webhook, delivery, number and outcome
    const attempts = attemptsOf(spans).sort((a, b) => Number(a.attributes['webhook.delivery.attempt']) - Number(b.attributes['webhook.delivery.attempt']));
    expect(attempts).toHaveLength(2);
    for (const a of attempts) {
      expect(a).toMatchObject({ service: 'gw-worker', kind: CLIENT, parentSpanId: relay.spanId });
      expect(a.attributes).toMatchObject({ 'webhook.id': hook.body.ID, 'webhook.delivery.id': delivery.ID, 'webhook.event.name': 'AccessRequestApproved', 'http.request.method': 'POST' });
    }
    expect(attempts[0].attributes).toMatchObject({ 'webhook.delivery.attempt': 1, 'http.response.status_code': 503, 'webhook.delivery.outcome': 'retry' });
    expect(attempts[0].status).toBe(2);
    expect(attempts[1].attributes).toMatchObject({ 'webhook.delivery.attempt': 2, 'http.response.status_code': 200, 'webhook.delivery.outcome': 'delivered' });
    expect(attempts[1].status).not.toBe(2);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([approval.traceId]));

    // the outbox row holds the W3C context of the request; subscribers never see trace headers
    const db = new Client({ connectionString: env.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT trace_context FROM outbox_events WHERE name = 'AccessRequestApproved'`);
      expect(rows).toHaveLength(1);
      expect(rows[0].trace_context.traceparent).toMatch(new RegExp(`^00-${approval.traceId}-[0-9a-f]{16}-01$`));
    } finally {
      await db.end();
    }
    for (const r of sink.received) {
      expect(r.headers.traceparent).toBeUndefined();
      expect(r.headers.tracestate).toBeUndefined();
    }
  });
});
