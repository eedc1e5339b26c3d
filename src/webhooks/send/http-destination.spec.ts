import { AddressGuard } from './address-guard';
import { isHttpUrl, splitCredentials } from './http-destination';
import { targetWarnings } from '../target-warnings';

describe('http webhook URLs', () => {
  it('judges every spelling of an address as the HTTP client reads it', () => {
    for (const u of [
      'http://127.0.0.1:1/',
      'http://0x7f000001:1/',
      'http://2130706433:1/',
      'http://127.1:1/',
      'http://0177.0.0.1:1/',
      'HTTP://Hooks.Example.com/x',
      'https://bücher.example/hook',
      'http://[::1]:8080/',
      'http://user:pass@127.0.0.1:1/',
      'https://hooks.example.com./x',
      'http://localhost.:8080/',
    ])
      expect([u, isHttpUrl(u)]).toEqual([u, true]);
  });

  it('refuses what is not an absolute http(s) URL written out, even where the parser would complete it', () => {
    for (const u of [
      'http:x',
      'http:/127.0.0.1/',
      'http:\\\\127.0.0.1/',
      'ftp://a.example/',
      '/relative',
      'http://a_b/',
      'http://a..b/',
      'http://./',
      'https://a.example:99999/',
      'http://a b/',
      '',
      5,
      null,
    ])
      expect([u, isHttpUrl(u)]).toEqual([u, false]);
  });

  it('warns about a non-public address however it is spelled', () => {
    const closed = new AddressGuard([]);
    for (const u of ['http://0x7f000001:1/', 'http://2130706433:1/', 'http://127.1:1/', 'http://0177.0.0.1:1/'])
      expect([u, targetWarnings(u, closed)]).toEqual([u, [expect.stringContaining('127.0.0.1')]]);
  });

  it('turns credentials in the URL into HTTP Basic authentication, and sends the URL without them', () => {
    expect(splitCredentials('http://user:s%3Acret%20@127.0.0.1:1/p?q=1')).toEqual({
      url: 'http://127.0.0.1:1/p?q=1',
      authorization: `Basic ${Buffer.from('user:s:cret ').toString('base64')}`,
    });
    expect(splitCredentials('http://token@127.0.0.1/')).toEqual({
      url: 'http://127.0.0.1/',
      authorization: `Basic ${Buffer.from('token:').toString('base64')}`,
    });
    expect(splitCredentials('http://127.0.0.1:1/x')).toEqual({ url: 'http://127.0.0.1:1/x', authorization: null });
  });
});
