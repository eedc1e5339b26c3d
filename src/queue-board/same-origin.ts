import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hasBody } from '../common/http/input-policy';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Why a request that changes the queues cannot be taken, or undefined. A browser that holds the board's Basic
 * credentials attaches them to any request for this origin, a form another site posts included (a `text/plain`
 * form can carry JSON): so a change must come from the board's own page. Browsers say where a write comes from
 * (Sec-Fetch-Site, or Origin in older ones); a script or curl sends neither and is taken as it is. The board's
 * page sends its bodies as JSON, which no form can.
 */
export function crossSiteWriteRefusal(
  method: string,
  headers: IncomingHttpHeaders,
): { status: 403 | 415; reason: string } | undefined {
  if (READS.has(method.toUpperCase())) return undefined;
  const site = headers['sec-fetch-site'];
  // (the browser's own word first: behind a proxy that rewrites Host, Origin and Host differ on the board's page too)
  const crossSite =
    site !== undefined
      ? site !== 'same-origin' && site !== 'none'
      : headers.origin !== undefined && !sameHost(headers.origin, headers.host);
  if (crossSite) return { status: 403, reason: 'the queues are changed from their own page only' };
  if (hasBody(headers) && !/^application\/json\s*(;|$)/i.test(headers['content-type'] ?? ''))
    return { status: 415, reason: 'the body must be JSON: send Content-Type: application/json' };
  return undefined;
}

/** Whether an Origin header names the host the request was sent to (`null`, an opaque origin, never does). */
function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** An onRequest hook refusing the changes crossSiteWriteRefusal finds sent from elsewhere. */
export function refuseCrossSiteWrites() {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const refusal = crossSiteWriteRefusal(req.method, req.headers);
    if (!refusal) return;
    await reply
      .code(refusal.status)
      .header('cache-control', 'no-store')
      .type('text/plain; charset=utf-8')
      .send(`Refused: ${refusal.reason}.\n`);
  };
}
