import { Context, context, propagation, ProxyTracerProvider, ROOT_CONTEXT, trace } from '@opentelemetry/api';

/**
 * A trace context as text fields (W3C `traceparent`, and `tracestate` when there is one), small enough to
 * ride along in a queue job. It lets the relay and each delivery attempt continue the trace of the request
 * that recorded the event, across processes.
 */
export type TraceCarrier = Record<string, string>;

const TRACER_NAME = 'gateway-management.webhooks';

/** The dispatcher's spans: the relay of an outbox event, and each delivery attempt. */
export const dispatcherTracer = () => trace.getTracer(TRACER_NAME);

/**
 * Whether spans go anywhere: a tracer provider is registered (the SDK's, or a test's). Without one every span
 * is a no-op, so the per-attempt work of building one can be skipped.
 */
export function tracingOn(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
}

/** The carrier of `ctx` (default: the active context), or undefined when nothing is traced. */
export function traceCarrier(ctx: Context = context.active()): TraceCarrier | undefined {
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** The context a carrier describes, to parent spans on; the root context when there is none. */
export function contextFromCarrier(carrier: TraceCarrier | null | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}
