import { createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { ReceivedRequest } from './sink';

/** How receivers check a delivery, each with only the key it holds. */

function headersOf(r: ReceivedRequest): Record<string, string> {
  return r.headers as Record<string, string>;
}

/** Whether `verify` passes (the receiver libraries throw on a signature they refuse). */
function passes(verify: () => unknown): boolean {
  try {
    verify();
    return true;
  } catch {
    return false;
  }
}

/** A v1 receiver using the standardwebhooks package. */
export function standardWebhooksVerifies(secret: string, r: ReceivedRequest): boolean {
  return passes(() => new Webhook(secret).verify(r.body, headersOf(r)));
}

/** A v1 receiver using the svix package's Webhook.verify. */
export function svixVerifies(secret: string, r: ReceivedRequest): boolean {
  return passes(() => new SvixWebhook(secret).verify(r.body, headersOf(r)));
}

/** Both v1 receiver libraries agree, and answer whether the delivery verifies with `secret`. */
export function v1Verifies(secret: string, r: ReceivedRequest): boolean {
  const a = standardWebhooksVerifies(secret, r);
  const b = svixVerifies(secret, r);
  if (a !== b) throw new Error(`standardwebhooks says ${a}, svix says ${b}`);
  return a;
}

/** A v1a receiver with node:crypto and the published `whpk_` key only. */
export function ed25519Verifies(publicKey: string, r: ReceivedRequest): boolean {
  if (!publicKey.startsWith('whpk_')) throw new Error(`not a whpk_ public key: ${publicKey}`);
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const content = Buffer.from(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`);
  return String(r.headers['webhook-signature'] ?? '')
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => verify(null, content, key, Buffer.from(s.slice('v1a,'.length), 'base64')));
}

/** The schemes of the signatures in `webhook-signature`, in order. */
export function signatureSchemes(r: ReceivedRequest): string[] {
  return String(r.headers['webhook-signature'] ?? '')
    .split(' ')
    .map((s) => s.split(',')[0]);
}
