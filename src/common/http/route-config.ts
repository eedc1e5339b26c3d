import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

/**
 * Adds `config` to the Fastify route config of a handler (read by hooks as `request.routeOptions.config`), merged
 * with what other decorators put there: Nest's own RouteConfig replaces it, so two of them on one handler would
 * leave only the last.
 */
export const MergeRouteConfig =
  (config: Record<string, unknown>): MethodDecorator =>
  (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const before = (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as object | undefined) ?? {};
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...before, ...config }, handler);
    return descriptor;
  };
