import { AppConfig } from '../../config';
import { SecretBox, secretsEqual } from './secret-box';

describe('SecretBox', () => {
  const box = new SecretBox({ secrets: { encryptionKey: Buffer.alloc(32, 1) } } as AppConfig);
  const other = new SecretBox({ secrets: { encryptionKey: Buffer.alloc(32, 2) } } as AppConfig);

  it('round-trips a secret and never stores it in clear', () => {
    const sealed = box.encrypt('s3cret-value');
    expect(sealed).not.toContain('s3cret');
    expect(box.decrypt(sealed)).toBe('s3cret-value');
    expect(box.encrypt('s3cret-value')).not.toBe(sealed); // fresh IV each time
  });

  it('refuses a tampered value or the wrong key', () => {
    const sealed = box.encrypt('abc');
    const parts = sealed.split(':');
    parts[3] = Buffer.from('abd').toString('base64');
    expect(() => box.decrypt(parts.join(':'))).toThrow();
    expect(() => other.decrypt(sealed)).toThrow();
  });

  it('compares secrets whatever their lengths', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
    expect(secretsEqual(undefined, 'abc')).toBe(false);
  });
});
