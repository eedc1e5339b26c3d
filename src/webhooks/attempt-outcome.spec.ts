import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DeliveryFailedMessage } from '../events/event-messages';
import { MetricsRegistry } from '../metrics/metrics.registry';
import { ATTEMPT_ERRORS, ATTEMPT_OUTCOMES, attemptOutcome, AttemptOutcome, NO_ERROR } from './attempt-outcome';
import type { ClaimedDelivery } from './delivery.store';
import type { SendResult } from './send/destination';
import { decide } from './send/retry-policy';
import { DeliveryMetrics } from './webhook-metrics';
import { AttemptTrace } from './worker/attempt-trace';

const SCHEDULE = [0, 5, 300];

const delivery: ClaimedDelivery = {
  id: 'd1',
  at: '2026-11-24 10:00:00+00',
  attemptCount: 0,
  trigger: 'scheduled',
  webhookId: 'w1',
  type: 'http',
  url: 'http://127.0.0.1:9/hook',
  destinationEncrypted: null,
  destinationOptions: {},
  method: 'POST',
  timeoutSeconds: 5,
  active: true,
  secretEncrypted: '',
  signatureScheme: 'v1',
  previousSecretEncrypted: null,
  previousSignatureScheme: null,
  headers: [],
  eventName: 'AccessRequestApproved',
  payload: {},
  occurredAt: new Date(),
  eventId: 'e1',
  webhookName: 'w',
  failingSince: null,
  rateLimit: null,
  ordered: false,
  lease: '',
  claim: '',
};

const answer = (statusCode: number | null, error: SendResult['error'], extra: Partial<SendResult> = {}) =>
  ({ statusCode, error, durationMs: 12, responseBody: '', ...extra }) satisfies SendResult;

/** Attempts as the sender reports them, with the attempt number the retry policy decides on. */
const ATTEMPTS: { what: string; result: SendResult; number: number }[] = [
  { what: 'a 2xx', result: answer(204, null), number: 1 },
  { what: 'a 500 with retries left', result: answer(500, 'http_status'), number: 1 },
  { what: 'a 500 on the last attempt', result: answer(500, 'http_status'), number: 3 },
  { what: 'a 503 with Retry-After', result: answer(503, 'http_status', { retryAfter: '7' }), number: 1 },
  { what: '410 Gone', result: answer(410, 'http_status'), number: 1 },
  { what: 'a timeout', result: answer(null, 'timeout'), number: 2 },
  { what: 'a connection error', result: answer(null, 'connection'), number: 3 },
  { what: 'a blocked address', result: answer(null, 'blocked_address'), number: 1 },
  { what: 'a message no queue took', result: answer(null, 'unroutable'), number: 1 },
  { what: 'a message the broker refused, on the last attempt', result: answer(null, 'rejected'), number: 3 },
];

describe('one vocabulary for attempt outcomes and errors, in metrics and spans', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => trace.disable());
  beforeEach(() => exporter.reset());

  it('has a word for every decision of the retry policy, each a different one', () => {
    const words = (['delivered', 'retry', 'final', 'disable'] as const).map(attemptOutcome);
    expect(new Set(words).size).toBe(4);
    for (const w of words) expect(ATTEMPT_OUTCOMES).toContain(w);
  });

  it.each(ATTEMPTS)('says the same of $what in the metric labels and on the span', async ({ result, number }) => {
    const registry = new MetricsRegistry();
    const metrics = new DeliveryMetrics(registry);
    const outcome = attemptOutcome(decide(result, number, SCHEDULE, () => 0.5).kind);
    const traced = new AttemptTrace(undefined);
    traced.begin(delivery, number);
    traced.end(result, outcome, null);
    metrics.attempt(outcome, result.error, result.durationMs);

    const [span] = exporter.getFinishedSpans();
    const counts = (await registry.getSingleMetric('webhook_delivery_attempts_total')!.get()).values;
    expect(counts).toHaveLength(1);
    const counted = counts[0].labels;
    const timed = new Set(
      (await registry.getSingleMetric('webhook_attempt_duration_seconds')!.get()).values.map((v) => v.labels.outcome),
    );

    expect(ATTEMPT_OUTCOMES).toContain(counted.outcome);
    expect([...ATTEMPT_ERRORS, NO_ERROR]).toContain(counted.error);
    expect(span.attributes['webhook.delivery.outcome']).toBe(counted.outcome);
    expect([...timed]).toEqual([counted.outcome]);
    if (counted.error === NO_ERROR) expect(span.attributes['error.type']).toBeUndefined();
    else expect(span.attributes['error.type']).toBe(counted.error);
  });

  it('names an attempt whose answer another worker superseded the same way in both', async () => {
    const registry = new MetricsRegistry();
    const metrics = new DeliveryMetrics(registry);
    const superseded: AttemptOutcome = 'superseded';
    expect(ATTEMPT_OUTCOMES).toContain(superseded);
    const traced = new AttemptTrace(undefined);
    traced.begin(delivery, 1);
    traced.end(answer(200, null), superseded, null);
    metrics.attempt(superseded, null, 12);
    const [counted] = (await registry.getSingleMetric('webhook_delivery_attempts_total')!.get()).values;
    expect(counted.labels).toEqual({ outcome: 'superseded', error: NO_ERROR });
    expect(exporter.getFinishedSpans()[0].attributes['webhook.delivery.outcome']).toBe('superseded');
  });

  it('is the list of errors the delivery log and the DeliveryFailed event document', () => {
    const documented = (cls: object, property: string) =>
      Reflect.getMetadata('swagger/apiModelProperties', (cls as { prototype: object }).prototype, property).enum;
    expect(documented(DeliveryFailedMessage, 'LastError')).toEqual([...ATTEMPT_ERRORS]);
  });
});
