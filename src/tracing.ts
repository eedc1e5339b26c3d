/**
 * OpenTelemetry tracing. main.ts requires this file before anything else, because the instrumentations
 * patch `http`, `pg`, `ioredis`, `undici` and Nest as those are loaded. Exporter, endpoint, protocol,
 * sampler, batching and resource come from the standard `OTEL_*` variables, read by the SDK. When no
 * variable asks for traces nothing of the SDK is loaded: the code's spans go to the API's no-op tracer.
 *
 * Spans: the HTTP server span of each request (named by its route), Nest's handler span, the database and
 * Redis calls made inside a traced operation, and the dispatcher's own spans (the relay of an outbox event
 * and each delivery attempt), which carry the trace of the request that recorded the event.
 */
import type { NodeSDK } from '@opentelemetry/sdk-node';
import { tracingSettingsFromEnvironment } from './config/tracing-env';

/** Probes and scrapes are not worth a trace each. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

let sdk: NodeSDK | undefined;

const settings = tracingSettingsFromEnvironment();
if (settings.enabled) sdk = startTracing(settings.defaultServiceName);

function startTracing(defaultServiceName: string | undefined): NodeSDK {
  // required here, not imported, so that a process without tracing never loads the SDK

  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { NestInstrumentation } =
    require('@opentelemetry/instrumentation-nestjs-core') as typeof import('@opentelemetry/instrumentation-nestjs-core');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  const { UndiciInstrumentation } =
    require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');

  const tracing = new NodeSDK({
    serviceName: defaultServiceName,
    // traces only: metrics stay on /metrics, logs on stdout
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.test(req.url ?? ''),
        requireParentforOutgoingSpans: true,
      }),
      new NestInstrumentation(),
      // Database and Redis calls only inside a traced operation: the queue's and the relay's polling
      // would otherwise be a stream of one-span traces.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation({ requireParentforSpans: true }),
    ],
  });
  tracing.start();
  return tracing;
}

/** Exports the spans still buffered and stops the SDK; nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  await running?.shutdown().catch(() => undefined);
}
