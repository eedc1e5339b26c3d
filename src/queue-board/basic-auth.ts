import type { FastifyReply, FastifyRequest } from 'fastify';
import { secretsEqual } from '../common/crypto/secret-box';

export const QUEUE_BOARD_REALM = 'queues';

/** The password of `Authorization: Basic base64(user:password)`, or undefined; the user name is not checked. */
export function basicPassword(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(value ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/**
 * An onRequest hook admitting only HTTP Basic credentials whose password is the admin secret: a browser
 * cannot send the admin family's Admin-Auth header, but it asks for and remembers Basic credentials.
 */
export function requireAdminSecret(adminSecret: string) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    if (secretsEqual(basicPassword(req.headers.authorization), adminSecret)) return;
    await reply
      .code(401)
      .header('www-authenticate', `Basic realm="${QUEUE_BOARD_REALM}", charset="UTF-8"`)
      .header('cache-control', 'no-store')
      .type('text/plain; charset=utf-8')
      .send('Unauthorised: sign in with the admin secret as the password.\n');
  };
}
