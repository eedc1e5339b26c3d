import { ValidationFailed } from '../errors/api-error';
import { fingerprintKey, idempotencyKeyOf, requestFingerprint as fingerprintWith } from './idempotency-key';

const secret = fingerprintKey(Buffer.alloc(32, 1));
const requestFingerprint = (r: Parameters<typeof fingerprintWith>[0]) => fingerprintWith(r, secret);

const key = (...values: string[]) => idempotencyKeyOf(values.flatMap((v) => ['Idempotency-Key', v]));
const reason = (...values: string[]): string => {
  try {
    key(...values);
  } catch (err) {
    if (err instanceof ValidationFailed) return err.messages.join('; ');
    throw err;
  }
  throw new Error('accepted');
};

describe('idempotencyKeyOf', () => {
  it('has no key without the header', () => {
    expect(idempotencyKeyOf(['Content-Type', 'application/json'])).toBeUndefined();
  });

  it('reads a structured-field string, escapes included, and a bare key as most clients send it', () => {
    expect(key('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(key('8e03978e-40d5-43e8-bc93-6894a57f9324')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324');
    expect(key('"say \\"hi\\" \\\\ bye"')).toBe('say "hi" \\ bye');
    expect(key('  order-1  ')).toBe('order-1');
    expect(idempotencyKeyOf(['idempotency-key', 'k1'])).toBe('k1');
    expect(key('x'.repeat(255))).toHaveLength(255);
    expect(key(`"${'\\"'.repeat(255)}"`)).toBe('"'.repeat(255));
  });

  it('refuses empty, over-long, non-ASCII, control and malformed keys, naming the header', () => {
    expect(reason('')).toMatch(/^Idempotency-Key: must not be empty/);
    expect(reason('""')).toMatch(/^Idempotency-Key: /);
    expect(reason('x'.repeat(256))).toBe('Idempotency-Key: at most 255 characters');
    expect(reason(`"${'x'.repeat(256)}"`)).toBe('Idempotency-Key: at most 255 characters');
    expect(reason('x'.repeat(100_000))).toBe('Idempotency-Key: at most 255 characters');
    for (const bad of [
      'caf\u00e9',
      'a\u0001b',
      'a\tb',
      'a b',
      'a"b',
      '"unterminated',
      '"a";p=1',
      '"a" "b"',
      '"\u00e9"',
      '" "',
    ])
      expect(reason(bad)).toMatch(/^Idempotency-Key: /);
  });

  it('refuses a key sent twice, also as one field that a client or proxy joined', () => {
    expect(reason('a', 'a')).toBe('Idempotency-Key: send one key, in one header field');
    expect(reason('key-1, key-2')).toBe('Idempotency-Key: send one key, in one header field (this one holds a list)');
    // a quoted key may hold a comma and a space
    expect(key('"key-1, key-2"')).toBe('key-1, key-2');
  });
});

describe('requestFingerprint', () => {
  const base = { method: 'POST', url: '/portal-api/apps', query: {}, body: { Name: 'a', UserID: 1 } };

  it('is the same for the same request, whatever the order of members', () => {
    expect(requestFingerprint(base)).toBe(requestFingerprint({ ...base, body: { UserID: 1, Name: 'a' } }));
    expect(requestFingerprint({ ...base, url: '/portal-api/apps?b=2&a=1', query: { b: '2', a: '1' } })).toBe(
      requestFingerprint({ ...base, url: '/portal-api/apps?a=1&b=2', query: { a: '1', b: '2' } }),
    );
    expect(requestFingerprint({ ...base, body: undefined })).toBe(requestFingerprint({ ...base, body: null }));
  });

  it('differs with the method, the path, the query or the body', () => {
    const f = requestFingerprint(base);
    expect(requestFingerprint({ ...base, method: 'PUT' })).not.toBe(f);
    expect(requestFingerprint({ ...base, url: '/portal-api/apps/1' })).not.toBe(f);
    expect(requestFingerprint({ ...base, query: { p: '1' } })).not.toBe(f);
    expect(requestFingerprint({ ...base, body: { Name: 'b', UserID: 1 } })).not.toBe(f);
    expect(requestFingerprint({ ...base, body: { Name: 'a', UserID: '1' } })).not.toBe(f);
  });

  it('is keyed: another ENCRYPTION_KEY gives another fingerprint of the same request', () => {
    expect(fingerprintWith(base, fingerprintKey(Buffer.alloc(32, 2)))).not.toBe(requestFingerprint(base));
    expect(requestFingerprint(base)).toMatch(/^[0-9a-f]{64}$/);
  });
});
