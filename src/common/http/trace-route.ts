import { context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';

/**
 * Tells the HTTP server span of the current request its route template (`/portal-api/webhooks/:id`), so
 * traces are named and grouped by route rather than by bare method. Nothing happens without tracing.
 */
export function setTraceRoute(route: string | undefined): void {
  if (!route) return;
  const rpc = getRPCMetadata(context.active());
  if (rpc?.type === RPCType.HTTP) rpc.route = route;
}
