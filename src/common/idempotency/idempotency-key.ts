import { createHmac, hkdfSync } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { ValidationFailed } from '../errors/api-error';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The header a replayed answer carries. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Printable ASCII, spaces inside only: the characters a key may have once unquoted. */
const KEY_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** A key sent bare (without quotes), as most clients do: visible ASCII without spaces or quotes. */
const BARE_KEY = /^[\x21\x23-\x7e]+$/;

function invalid(reason: string): ValidationFailed {
  return new ValidationFailed([`${IDEMPOTENCY_KEY_HEADER}: ${reason}`]);
}

/**
 * The idempotency key of a request, from its raw header lines (so a repeated header is seen, not merged), or
 * undefined when it has none. The key is a structured-field string (`"8e03978e-..."`, with `\"` and `\\`
 * escapes); a bare run of visible ASCII (`8e03978e-...`) is taken as it is. At most 255 characters, printable
 * ASCII only; anything else is a validation failure naming the header.
 */
export function idempotencyKeyOf(rawHeaders: string[]): string | undefined {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if (rawHeaders[i].toLowerCase() === 'idempotency-key') values.push(rawHeaders[i + 1]);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw invalid('send one key, in one header field');
  const value = values[0].trim();
  if (value === '') throw invalid('must not be empty');
  // (escapes take two characters each: room for them before the key's own length is checked)
  if (value.length > 2 * MAX_IDEMPOTENCY_KEY_LENGTH + 2)
    throw invalid(`at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  let key: string;
  if (value.startsWith('"')) {
    const parsed = sfString(value);
    if (parsed === null)
      throw invalid('a quoted key must be one string of printable ASCII characters, with \\" and \\\\ escapes');
    key = parsed;
  } else {
    // two fields joined by a client or proxy (`a, b`): as many keys, not one with a space in it
    if (/,\s/.test(value)) throw invalid('send one key, in one header field (this one holds a list)');
    if (!BARE_KEY.test(value))
      throw invalid('must be printable ASCII: a bare key without spaces or quotes, or a quoted string');
    key = value;
  }
  if (!KEY_TEXT.test(key)) throw invalid('must hold printable ASCII characters and not start or end with a space');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) throw invalid(`at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  return key;
}

/**
 * The value of a structured-field string (RFC 8941): printable ASCII between double quotes, `\"` and `\\`
 * escaping a quote and a backslash; null when `text` is anything else (parameters after it included).
 */
function sfString(text: string): string | null {
  let out = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') {
      const escaped = text[++i];
      if (escaped !== '"' && escaped !== '\\') return null;
      out += escaped;
    } else if (c === '"') {
      return i === text.length - 1 ? out : null;
    } else if (c < ' ' || c > '~') {
      return null;
    } else {
      out += c;
    }
  }
  return null;
}

/** The key fingerprints are made with, derived from ENCRYPTION_KEY (never the encryption key itself). */
export function fingerprintKey(encryptionKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', encryptionKey, Buffer.alloc(0), 'idempotency-key fingerprint', 32));
}

/**
 * What makes two requests with one key "the same request": method, path, query and body. The query and the
 * body are compared as parsed JSON with their members in a fixed order, so spacing and member order do not
 * matter; no body and a JSON `null` are the same. A keyed digest (HMAC-SHA256), as a body may hold a password:
 * the stored fingerprint must not let anyone test guesses of it.
 */
export function requestFingerprint(
  request: { method: string; url: string; query?: unknown; body?: unknown },
  key: Buffer,
): string {
  const path = request.url.split('?')[0];
  const canonical = stringify([request.method, path, request.query ?? {}, request.body ?? null]);
  return createHmac('sha256', key).update(canonical).digest('hex');
}
