import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** `'sha256-…'` source expression of an inline script or style, for a Content-Security-Policy. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * A strict policy for the browser pages the service serves (the console, the queue board): nothing but
 * the service's own files, no inline script, inline style only where hashed, no framing, no form posts
 * elsewhere.
 */
export function contentSecurityPolicy(opts: { styleHashes?: string[]; baseUri?: "'none'" | "'self'" } = {}): string {
  const styleHashes = opts.styleHashes ?? [];
  const style = styleHashes.length ? `'self' 'unsafe-hashes' ${styleHashes.join(' ')}` : `'self'`;
  return [
    `default-src 'none'`,
    `script-src 'self'`,
    `style-src ${style}`,
    `img-src 'self' data:`,
    `font-src 'self' data:`,
    `connect-src 'self'`,
    `manifest-src 'self'`,
    `base-uri ${opts.baseUri ?? "'none'"}`,
    `form-action 'self'`,
    `frame-ancestors 'none'`,
  ].join('; ');
}

/** An onSend hook putting the policy and the usual hardening headers on every answer of a page's routes. */
export function pageSecurityHeaders(csp: string) {
  return async (_req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    void reply.header('content-security-policy', csp);
    void reply.header('x-content-type-options', 'nosniff');
    void reply.header('x-frame-options', 'DENY');
    void reply.header('referrer-policy', 'no-referrer');
    void reply.header('cross-origin-opener-policy', 'same-origin');
    void reply.header('cross-origin-resource-policy', 'same-origin');
    void reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
    return payload;
  };
}

/**
 * The headers of an answer meant for its caller alone (every answer of the four route families): no cache keeps it
 * (it may carry a revealed secret or an issued credential), and the JSON, which echoes what callers stored, is never
 * sniffed as a page.
 */
export function privateAnswerHeaders(reply: FastifyReply): void {
  void reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
}
