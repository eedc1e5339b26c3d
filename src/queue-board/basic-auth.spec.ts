import { basicPassword } from './basic-auth';
import { bullBoardStyleHashes } from './queue-board.module';

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

describe('Bull Board basic auth', () => {
  it('takes the password of a Basic credential, whatever the user name', () => {
    expect(basicPassword(basic('admin:s3cret'))).toBe('s3cret');
    expect(basicPassword(basic(':s3cret'))).toBe('s3cret');
    expect(basicPassword(basic('ops:with:colons'))).toBe('with:colons');
    expect(basicPassword(`basic ${Buffer.from('a:b').toString('base64')}`)).toBe('b');
  });

  it('finds no password in anything else', () => {
    expect(basicPassword(undefined)).toBeUndefined();
    expect(basicPassword('')).toBeUndefined();
    expect(basicPassword('Bearer abc')).toBeUndefined();
    expect(basicPassword(basic('no-colon'))).toBeUndefined();
    expect(basicPassword('Basic not base64!')).toBeUndefined();
  });
});

describe('Bull Board page policy', () => {
  it('hashes each inline style of the installed UI, and only those', () => {
    const hashes = bullBoardStyleHashes();
    expect(hashes.length).toBeGreaterThan(0);
    for (const h of hashes) expect(h).toMatch(/^'sha256-[A-Za-z0-9+/]{43}='$/);
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});
