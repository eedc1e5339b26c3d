import type { IncomingMessage } from 'node:http';
import { familyOf } from '../errors/families';

/**
 * The request target a route of the four families is looked up by: one trailing slash of the path dropped, so
 * `/api/apis/?p=1` is `/api/apis?p=1`, as the product's own examples write it. Only the families' paths: the
 * console and the queue board serve directories, whose trailing slash means something (and a path ending in two
 * slashes stays what it is: no route).
 */
export function withoutTrailingSlash(url: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.endsWith('/') || path.endsWith('//') || familyOf(url) === 'other') return url;
  return path.slice(0, -1) + (q < 0 ? '' : url.slice(q));
}

/** Fastify's `rewriteUrl`: the target routes are looked up by (see withoutTrailingSlash). */
export function rewriteUrl(req: IncomingMessage): string {
  return withoutTrailingSlash(req.url ?? '/');
}
