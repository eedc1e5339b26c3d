import { context, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { ClaimedDelivery } from '../delivery.store';
import type { SendResult } from '../send/destination';
import type { AttemptOutcome } from '../attempt-outcome';
import { contextFromCarrier, dispatcherTracer, TraceCarrier, traceCarrier, tracingOn } from '../trace-context';

/** A target's port when its URL names none, by scheme. */
const DEFAULT_PORTS: Record<string, number> = {
  'https:': 443,
  'amqp:': 5672,
  'amqps:': 5671,
  'nats:': 4222,
  'tls:': 4222,
};

/**
 * The span of one delivery attempt, a child of the trace its job carries (the relay of the event, or the
 * request that asked for a redelivery). It is the client span of the webhook request: the request itself is
 * sent with instrumentation suppressed, so no trace headers reach subscribers and a delivery looks the same
 * whether tracing is on or off. A job that is not claimed (not due, taken, no longer pending) makes no span;
 * nor does any attempt while no tracer provider is registered (the span would be a no-op: it is not built).
 */
export class AttemptTrace {
  private span?: Span;
  private retryCarrier?: TraceCarrier;

  constructor(private readonly carrier: TraceCarrier | undefined) {}

  /** Starts the span once the delivery is claimed for attempt `number`. */
  begin(d: ClaimedDelivery, number: number): void {
    if (!tracingOn()) return;
    const target = safeUrl(d.url);
    this.span = dispatcherTracer().startSpan(
      `deliver ${d.eventName}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'webhook.id': d.webhookId,
          'webhook.delivery.id': d.id,
          'webhook.delivery.attempt': number,
          'webhook.delivery.trigger': d.trigger,
          'webhook.event.name': d.eventName,
          'webhook.destination.type': d.type,
          ...(d.type === 'http' ? { 'http.request.method': d.method } : { 'messaging.system': d.type }),
          ...(target
            ? {
                'server.address': target.hostname,
                'server.port': Number(target.port) || (DEFAULT_PORTS[target.protocol] ?? 80),
              }
            : {}),
        },
      },
      contextFromCarrier(this.carrier),
    );
    this.retryCarrier = this.carrier ?? traceCarrier(trace.setSpan(ROOT_CONTEXT, this.span));
  }

  /** Runs the webhook request inside the span, with instrumentation of outgoing requests suppressed. */
  sending<T>(send: () => Promise<T>): Promise<T> {
    if (!this.span && !tracingOn()) return send(); // nothing traced, nothing instrumented to suppress
    const ctx = this.span ? trace.setSpan(context.active(), this.span) : context.active();
    return context.with(suppressTracing(ctx), send);
  }

  /**
   * The trace the next attempt's job carries: the one this job carried (attempts are siblings), else this attempt's.
   */
  get next(): TraceCarrier | undefined {
    return this.retryCarrier ?? this.carrier;
  }

  /**
   * Ends the span with the attempt's result and what it means for the delivery, in the words the metrics use:
   * `webhook.delivery.outcome` and `error.type` (the attempt's error kind; the status code has its own attribute).
   */
  end(result: SendResult, outcome: AttemptOutcome, recordError: Error | null): void {
    const span = this.span;
    if (!span) return;
    this.span = undefined;
    if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
    span.setAttribute('webhook.delivery.outcome', outcome);
    span.setAttribute('webhook.delivery.duration_ms', result.durationMs);
    if (result.error) span.setAttribute('error.type', result.error);
    if (recordError) span.recordException(recordError);
    if (outcome !== 'delivered' || recordError)
      span.setStatus({ code: SpanStatusCode.ERROR, message: recordError ? 'attempt not recorded' : outcome });
    span.end();
  }

  /** Ends the span of an attempt cut short by an error. */
  abandon(err: unknown): void {
    const span = this.span;
    if (!span) return;
    this.span = undefined;
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'attempt failed' });
    span.end();
  }
}

function safeUrl(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}
