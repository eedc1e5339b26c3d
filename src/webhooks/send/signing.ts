import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  KeyObject,
  randomBytes,
  sign as edSign,
} from 'node:crypto';

/**
 * Standard Webhooks schemes: `v1` is HMAC-SHA256 with a shared `whsec_` secret; `v1a` is Ed25519, the
 * service keeps the private key (`whsk_`) and receivers hold only the public key (`whpk_`).
 */
export const SIGNATURE_SCHEMES = ['v1', 'v1a'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** A key deliveries are signed with: the `whsec_` secret (v1) or the `whsk_` private key (v1a). */
export interface SigningKey {
  scheme: SignatureScheme;
  secret: string;
}

// DER header of a PKCS#8 Ed25519 private key; the 32-byte seed follows it.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A new key for `scheme`: `whsec_` + base64 of 24 random bytes, or `whsk_` + base64 of a 32-byte Ed25519 seed. */
export function newSigningKey(scheme: SignatureScheme): SigningKey {
  if (scheme === 'v1') return { scheme, secret: `whsec_${randomBytes(24).toString('base64')}` };
  const { privateKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32);
  return { scheme, secret: `whsk_${seed.toString('base64')}` };
}

/**
 * What a receiver verifies with: the `whsec_` secret itself (v1), or `whpk_` + base64 of the raw 32-byte public key
 * (v1a).
 */
export function verificationKey(key: SigningKey): string {
  if (key.scheme === 'v1') return key.secret;
  const spki = createPublicKey(ed25519PrivateKey(key.secret)).export({ format: 'der', type: 'spki' });
  return `whpk_${spki.subarray(-32).toString('base64')}`;
}

/**
 * A key ready to sign with: the HMAC key bytes (v1) or the Ed25519 private key object (v1a). Opening a key
 * (base64 decoding, building the key object) costs more than a signature; a signer that sends many attempts
 * with one key opens it once.
 */
export type OpenedKey = { scheme: 'v1'; hmacKey: Buffer } | { scheme: 'v1a'; privateKey: KeyObject };

/** The key `key` signs with. */
export function openSigningKey(key: SigningKey): OpenedKey {
  if (key.scheme === 'v1') return { scheme: 'v1', hmacKey: Buffer.from(stripPrefix(key.secret, 'whsec_'), 'base64') };
  return { scheme: 'v1a', privateKey: ed25519PrivateKey(key.secret) };
}

/** One signature over `<id>.<timestamp>.<body>`: `v1,<base64 HMAC-SHA256>` or `v1a,<base64 Ed25519>`. */
export function sign(key: SigningKey | OpenedKey, msgId: string, timestampSeconds: number, body: string): string {
  const opened = 'secret' in key ? openSigningKey(key) : key;
  const content = `${msgId}.${timestampSeconds}.${body}`;
  if (opened.scheme === 'v1') return `v1,${createHmac('sha256', opened.hmacKey).update(content).digest('base64')}`;
  return `v1a,${edSign(null, Buffer.from(content), opened.privateKey).toString('base64')}`;
}

/**
 * The Standard Webhooks headers of one attempt, signed by every key given (the current one first, then
 * the previous one during a rotation's grace period): `webhook-signature` lists the signatures separated
 * by spaces, and a receiver accepts the request when any of them verifies with the key it holds.
 */
export function signatureHeaders(
  keys: (SigningKey | OpenedKey)[],
  msgId: string,
  body: string,
  now = Date.now(),
): Record<string, string> {
  if (keys.length === 0) throw new Error('a delivery needs at least one signing key');
  const ts = Math.floor(now / 1000);
  return {
    'webhook-id': msgId,
    'webhook-timestamp': String(ts),
    'webhook-signature': keys.map((k) => sign(k, msgId, ts, body)).join(' '),
  };
}

function ed25519PrivateKey(secret: string): KeyObject {
  const seed = Buffer.from(stripPrefix(secret, 'whsk_'), 'base64');
  if (seed.length !== 32) throw new Error('not an Ed25519 signing key');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

function stripPrefix(value: string, prefix: string): string {
  return value.startsWith(prefix) ? value.slice(prefix.length) : value;
}
