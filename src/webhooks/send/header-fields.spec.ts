import { request } from 'undici';
import { HEADER_NAME, HEADER_VALUE } from './header-fields';

describe('webhook header fields', () => {
  const accepted = ['', 'abc123', 'Bearer abc', 'a\tb', 'a  b', 'ümlaut', 'ÿ', '!~', '\u0085'];
  const refused = [
    'a\u0001b',
    'a\u007fb',
    'a\u0000b',
    '🙂',
    'a\u0100b',
    'a\u200bb',
    'a\rb',
    'a\nb',
    '\t',
    ' ',
    ' lead',
    'trail ',
    'trail\t',
  ];

  it('takes visible ASCII and Latin-1 with spaces and tabs between, and nothing else', () => {
    for (const v of accepted) expect([v, HEADER_VALUE.test(v)]).toEqual([v, true]);
    for (const v of refused) expect([v, HEADER_VALUE.test(v)]).toEqual([v, false]);
  });

  it('accepts nothing the HTTP client would refuse to send', async () => {
    // the HTTP client checks the headers before it connects: a port nobody listens on never gets a request
    const clientRefuses = async (value: string) => {
      try {
        await request('http://127.0.0.1:9/', { headers: { 'x-v': value } });
        return false;
      } catch (err) {
        return (err as { code?: string }).code === 'UND_ERR_INVALID_ARG';
      }
    };
    for (let c = 0; c <= 0x10000; c++) {
      const v = `a${String.fromCharCode(c)}b`;
      if (!HEADER_VALUE.test(v)) continue;
      expect([c, await clientRefuses(v)]).toEqual([c, false]);
    }
    for (const v of refused.filter((r) => r.trim() === r)) expect([v, await clientRefuses(v)]).toEqual([v, true]);
  });

  it('takes header names that are HTTP tokens', () => {
    for (const n of ['X-Api-Key', 'authorization', "a!#$%&'*+-.^_`|~9"]) expect(HEADER_NAME.test(n)).toBe(true);
    for (const n of ['', 'bad name', 'x:y', 'x\u0001', 'ümlaut', 'a(b)']) expect(HEADER_NAME.test(n)).toBe(false);
  });
});
