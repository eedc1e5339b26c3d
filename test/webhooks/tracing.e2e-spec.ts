import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { hashTaggedPrefix, redisOptionsFromUrl } from '../../src/queue/redis-connection';
import { deliveryJobId } from '../../src/webhooks/delivery.queue';
import { HttpClient } from '../helpers/http-client';
import { OtlpReceiver, ReceivedSpan } from '../helpers/otlp-receiver';
import { ServiceProcess } from '../helpers/service-process';
import { Sink } from '../helpers/sink';
import { deleteQueueKeys, TEST_SECRETS } from '../helpers/test-env';
import { createAccessRequest, createApp, createWebhook } from '../helpers/portal';
import { useTestEnv } from '../helpers/use-service';
import { eventually } from '../helpers/eventually';

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const ERROR = 2;

const TOPOLOGIES = [
  { name: 'an api and a worker process', roles: ['api', 'worker'] },
  { name: 'one process with ROLE=all', roles: ['all'] },
];

/**
 * Tracing as `npm start` runs it, configured only by the standard OTEL_ variables: the processes export
 * to an OTLP receiver the test runs on loopback. One approval must be one trace from the HTTP request,
 * through the outbox row (Postgres) and the queue job (Redis), to every attempt of its delivery.
 */
describe.each(TOPOLOGIES)('OpenTelemetry tracing with $name', ({ roles }) => {
  const env = useTestEnv({ WEBHOOK_RETRY_SCHEDULE: '0,1,1' });
  let receiver: OtlpReceiver;
  let sink: Sink;
  let portal: HttpClient;
  let db: Client;
  const serviceOf = (role: 'api' | 'worker') => `gw-${roles.includes(role) ? role : 'all'}`;

  beforeAll(async () => {
    receiver = env.adopt(await OtlpReceiver.start());
    sink = env.adopt(await Sink.start());
    const otel = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    };
    const processes = await Promise.all(
      roles.map(async (role) =>
        env.adopt(await ServiceProcess.start({ ...env.vars, ...otel, ROLE: role, OTEL_SERVICE_NAME: `gw-${role}` })),
      ),
    );
    portal = new HttpClient(`http://127.0.0.1:${processes[0].port}`, { authorization: TEST_SECRETS.PORTAL_API_TOKEN });
    db = await env.client();
  });

  /** A pending access request, on an app of its own named `name`. */
  const requestAccess = async (name: string) =>
    createAccessRequest(portal, {
      AppID: (await createApp(portal, { Name: name, UserID: 1 })).ID,
      Products: ['weather-api'],
    });

  it('follows an approval from the HTTP request through the outbox and the queue to each delivery attempt, in one trace', async () => {
    // the first attempt meets a 503, the retry a 200: two attempt spans
    sink.responder = (_req, index) => (index === 0 ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' });
    const hook = await createWebhook(portal, {
      Name: 'traced',
      URL: sink.url('/traced'),
      Events: ['AccessRequestApproved'],
    });
    const ar = await requestAccess('Traced app');
    expect((await portal.put(`/portal-api/access_requests/${ar.ID}/approve`)).status).toBe(200);

    await sink.waitForCount(2, 20_000);
    const delivery = await eventually(
      async () => {
        const [d] = (await portal.get(`/portal-api/webhooks/${hook.ID}/deliveries`)).body;
        return d?.Status === 'delivered' ? d : undefined;
      },
      10_000,
      'the delivery to be marked delivered',
    );

    const approval = await eventually(
      async () =>
        receiver.spans.find(
          (s) =>
            s.kind === SERVER &&
            s.attributes['http.route'] === '/portal-api/access_requests/:access_request_id/approve',
        ),
      15_000,
      'the server span of the approval',
    );
    expect(approval).toMatchObject({
      service: serviceOf('api'),
      name: 'PUT /portal-api/access_requests/:access_request_id/approve',
      parentSpanId: '',
    });
    const attemptsOf = (spans: ReceivedSpan[]) =>
      spans
        .filter((s) => s.name === 'deliver AccessRequestApproved')
        .sort(
          (a, b) => Number(a.attributes['webhook.delivery.attempt']) - Number(b.attributes['webhook.delivery.attempt']),
        );
    const spans = await eventually(
      async () => {
        const all = receiver.trace(approval.traceId);
        return attemptsOf(all).length >= 2 ? all : undefined;
      },
      15_000,
      'both attempt spans in the approval trace',
    );
    const ancestry = ancestryIn(spans);

    // the request's own work, the statement that writes the outbox row among it
    expect(
      spans.some(
        (s) => s.service === serviceOf('api') && isPostgres(s) && /INSERT INTO outbox_events/.test(queryText(s)),
      ),
    ).toBe(true);

    // the relay continues the context stored in the outbox row
    const relays = spans.filter((s) => s.name === 'relay AccessRequestApproved');
    expect(relays).toHaveLength(1);
    const relay = relays[0];
    expect(relay).toMatchObject({ service: serviceOf('worker'), kind: PRODUCER });
    expect(relay.attributes).toMatchObject({
      'webhook.event.name': 'AccessRequestApproved',
      'messaging.destination.name': 'deliveries',
      'messaging.batch.message_count': 1,
    });
    expect(ancestry(relay)).toContainEqual(approval);

    // each attempt: a child of the relay (through the job), with its status code, webhook, delivery, number and outcome
    const attempts = attemptsOf(spans);
    expect(attempts).toHaveLength(2);
    for (const a of attempts) {
      expect(a).toMatchObject({ service: serviceOf('worker'), kind: CLIENT, parentSpanId: relay.spanId });
      expect(a.attributes).toMatchObject({
        'webhook.id': hook.ID,
        'webhook.delivery.id': delivery.ID,
        'webhook.delivery.trigger': 'scheduled',
        'webhook.event.name': 'AccessRequestApproved',
        'http.request.method': 'POST',
        'server.address': '127.0.0.1',
        'server.port': sink.port,
      });
    }
    expect(attempts[0].attributes).toMatchObject({
      'webhook.delivery.attempt': 1,
      'http.response.status_code': 503,
      'webhook.delivery.outcome': 'retry',
      'error.type': 'http_status',
    });
    expect(attempts[0].status).toBe(ERROR);
    expect(attempts[1].attributes).toMatchObject({
      'webhook.delivery.attempt': 2,
      'http.response.status_code': 200,
      'webhook.delivery.outcome': 'delivered',
    });
    expect(attempts[1].attributes['error.type']).toBeUndefined();
    expect(attempts[1].status).not.toBe(ERROR);

    // the outbox row holds the W3C context of the request
    const { rows } = await db.query(`SELECT trace_context FROM outbox_events WHERE name = 'AccessRequestApproved'`);
    expect(rows).toHaveLength(1);
    expect(rows[0].trace_context.traceparent).toMatch(new RegExp(`^00-${approval.traceId}-[0-9a-f]{16}-01$`));

    // a manual redelivery is traced from the request that asked for it
    expect((await portal.post(`/portal-api/webhooks/${hook.ID}/deliveries/${delivery.ID}/redeliver`)).status).toBe(200);
    await sink.waitForCount(3);
    const redeliver = await eventually(
      async () =>
        receiver.spans.find(
          (s) =>
            s.kind === SERVER &&
            s.attributes['http.route'] === '/portal-api/webhooks/:id/deliveries/:deliveryId/redeliver',
        ),
      15_000,
      'the server span of the redelivery',
    );
    const manual = await eventually(
      async () => attemptsOf(receiver.trace(redeliver.traceId))[0],
      15_000,
      'the manual attempt in the redelivery trace',
    );
    expect(manual.attributes).toMatchObject({
      'webhook.delivery.id': delivery.ID,
      'webhook.delivery.attempt': 3,
      'webhook.delivery.trigger': 'manual',
      'http.response.status_code': 200,
    });
    expect(ancestryIn(receiver.trace(redeliver.traceId))(manual)).toContainEqual(redeliver);

    // subscribers never see trace headers: a delivery is the same with tracing on or off
    for (const r of sink.received) {
      expect(r.headers.traceparent).toBeUndefined();
      expect(r.headers.tracestate).toBeUndefined();
    }
  });

  it('continues the event’s trace when the reconciler queues a delivery whose job Redis lost', async () => {
    // the first attempt is told to come back in ten minutes: its retry job waits in Redis
    let answered = 0;
    sink.responder = (req) =>
      req.url === '/lost' && answered++ === 0
        ? { status: 503, headers: { 'retry-after': '600' }, body: 'later' }
        : { status: 200, body: 'ok' };
    const hook = await createWebhook(portal, {
      Name: 'lost job',
      URL: sink.url('/lost'),
      Events: ['AccessRequestCreated'],
    });
    const ar = await requestAccess('Reconciled app');

    const pendingAfterOne = async () =>
      (
        await db.query(
          `SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'pending' AND attempt_count = 1`,
          [hook.ID],
        )
      ).rows[0];
    const { id } = await eventually(pendingAfterOne, 20_000, 'the first attempt recorded, the retry waiting');
    // the retry's job is queued just after the attempt's record commits: deleted before it is in, it would come in
    // after the wipe, delayed ten minutes, and the reconciler rightly leaves a delayed job alone
    const queue = new Queue('deliveries', {
      connection: redisOptionsFromUrl(env.redisUrl),
      prefix: hashTaggedPrefix(env.queuePrefix),
    });
    try {
      await eventually(
        async () => (await queue.getJobState(deliveryJobId(id, 2))) === 'delayed',
        10_000,
        "the retry's job in Redis",
      );
    } finally {
      await queue.close();
    }
    // Redis loses every job; Postgres still says the delivery is pending, and now due
    expect(await deleteQueueKeys(env.redisUrl, env.queuePrefix)).toBeGreaterThan(0);
    await db.query(
      `UPDATE webhook_deliveries SET next_attempt_at = now() - interval '10 seconds'
        WHERE webhook_id = $1 AND status = 'pending'`,
      [hook.ID],
    );
    await eventually(
      async () =>
        (await db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND status = 'delivered'`, [hook.ID]))
          .rows[0],
      30_000,
      'the delivery delivered by a job the reconciler queued',
    );
    const { rows } = await db.query(
      `SELECT trace_context FROM outbox_events WHERE name = 'AccessRequestCreated' AND payload->>'ID' = $1`,
      [String(ar.ID)],
    );
    const [, traceId, eventSpanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(rows[0].trace_context.traceparent)!;

    const attempts = await eventually(
      async () => {
        const found = receiver
          .trace(traceId)
          .filter((s) => s.name === 'deliver AccessRequestCreated')
          .sort(
            (a, b) =>
              Number(a.attributes['webhook.delivery.attempt']) - Number(b.attributes['webhook.delivery.attempt']),
          );
        return found.length >= 2 ? found : undefined;
      },
      15_000,
      'both attempts in the trace of the request that created the access request',
    );
    expect(attempts).toHaveLength(2);
    const relay = receiver.trace(traceId).find((s) => s.name === 'relay AccessRequestCreated')!;
    // the first through the relay's job; the second through the reconciler's, from the event's own context
    expect(attempts[0]).toMatchObject({ parentSpanId: relay.spanId });
    expect(attempts[0].attributes).toMatchObject({ 'webhook.delivery.attempt': 1, 'http.response.status_code': 503 });
    expect(attempts[1]).toMatchObject({ service: serviceOf('worker'), kind: CLIENT, parentSpanId: eventSpanId });
    expect(attempts[1].attributes).toMatchObject({
      'webhook.id': hook.ID,
      'webhook.delivery.attempt': 2,
      'webhook.delivery.trigger': 'scheduled',
      'http.response.status_code': 200,
      'webhook.delivery.outcome': 'delivered',
    });
  });
});

describe('tracing off', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gwm-tracing-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Loads the compiled tracing module in a fresh process (no `.env` where it runs) and says whether the SDK came with
   * it.
   */
  function loadsSdk(vars: Record<string, string>): boolean {
    const script = `require(${JSON.stringify(join(__dirname, '..', '..', 'dist', 'tracing.js'))});
      process.stdout.write(String(Object.keys(require.cache).some((f) => f.includes('@opentelemetry/sdk-node'))));`;
    const run = spawnSync(process.execPath, ['-e', script], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...vars },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    return run.stdout === 'true';
  }

  it('does not even load the SDK when no OTEL_ variable asks for traces', () => {
    expect(loadsSdk({})).toBe(false);
    expect(loadsSdk({ OTEL_SERVICE_NAME: 'gw', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(loadsSdk({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    // and does when one does (nothing is sent: the process ends before the first export)
    expect(loadsSdk({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toBe(true);
  });
});

function ancestryIn(spans: ReceivedSpan[]): (s: ReceivedSpan) => ReceivedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  return (s) => {
    const chain: ReceivedSpan[] = [];
    for (let p = byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) chain.push(p);
    return chain;
  };
}

function isPostgres(s: ReceivedSpan): boolean {
  return s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql';
}

function queryText(s: ReceivedSpan): string {
  return String(s.attributes['db.query.text'] ?? s.attributes['db.statement'] ?? '');
}
