import {
  createCipheriv,
  createDecipheriv,
  createHash,
  randomBytes,
  randomFillSync,
  timingSafeEqual,
} from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config';

const VERSION = 'v1';

/**
 * Random bytes for keys and IVs, drawn from a pool filled from the CSPRNG 4 KiB at a time (one call into it per
 * hundred secrets rather than one per secret, as Node's randomUUID does); every byte is handed out once and
 * zeroed in the pool as it is.
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

function drawRandom<T>(n: number, read: (buf: Buffer, start: number, end: number) => T): T {
  if (n > POOL_SIZE) return read(randomBytes(n), 0, n);
  if (taken + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_SIZE));
    taken = 0;
  }
  const start = taken;
  taken += n;
  const out = read(pool, start, taken);
  pool.fill(0, start, taken);
  return out;
}

/** AES-256-GCM encryption of secrets at rest with the configured ENCRYPTION_KEY. */
@Injectable()
export class SecretBox {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = config.secrets.encryptionKey;
  }

  encrypt(plain: string): string {
    const iv = drawRandom(12, (buf, start, end) => Buffer.from(buf.subarray(start, end)));
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64'), cipher.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, ct] = sealed.split(':');
    if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
    decipher.setAuthTag(Buffer.from(tag, 'base64'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64')), decipher.final()]).toString('utf8');
  }

  encryptNullable(plain: string | null | undefined): string | null {
    return plain === null || plain === undefined || plain === '' ? null : this.encrypt(plain);
  }

  decryptNullable(sealed: string | null | undefined): string {
    return sealed ? this.decrypt(sealed) : '';
  }
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Compares two secrets in constant time (digests first, so lengths do not leak either). */
export function secretsEqual(given: string | undefined | null, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

export function randomHex(bytes: number): string {
  return drawRandom(bytes, (buf, start, end) => buf.toString('hex', start, end));
}
