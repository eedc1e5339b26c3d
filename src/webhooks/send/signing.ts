import { createHmac, randomBytes } from 'node:crypto';

/** A new Standard Webhooks signing secret: `whsec_` + base64 of 24 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * Standard Webhooks signature: `v1,<base64 HMAC-SHA256 over "<id>.<timestamp>.<body>">`, keyed with the
 * base64-decoded part of the secret after `whsec_`.
 */
export function sign(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function signatureHeaders(secret: string, msgId: string, body: string, now = Date.now()): Record<string, string> {
  const ts = Math.floor(now / 1000);
  return { 'webhook-id': msgId, 'webhook-timestamp': String(ts), 'webhook-signature': sign(secret, msgId, ts, body) };
}
