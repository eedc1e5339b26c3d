import { isRedirectUrlList, redirectUrlsRefusal, splitRedirectUrls } from './redirect-urls.validator';

describe('RedirectURLs', () => {
  it('accepts "", one absolute address, several separated by commas (spaces around them too), and app schemes', () => {
    for (const v of [
      '',
      'https://a.example/cb',
      'https://a.example/cb, http://localhost:8080/cb',
      'https://a.example/cb,https://b.example/cb?x=1 , http://[::1]:8080/cb',
      'com.example.app:/oauth',
      'com.example.app://callback',
      'HTTPS://A.example/cb',
      'https://bücher.example/cb',
    ])
      expect([v, redirectUrlsRefusal(v)]).toEqual([v, null]);
  });

  it('refuses relative addresses, fragments and non-strings', () => {
    for (const v of ['/cb', 'a.example/cb', 'https://a.example/cb#x', 'https://ok.example,nope', 5, null])
      expect(isRedirectUrlList(v)).toBe(false);
  });

  it('refuses schemes that are no place for an authorization code, and schemes of no app', () => {
    for (const v of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:text/html,x',
      'vbscript:msgbox(1)',
      'file:///etc/passwd',
      'mailto:x@y',
      'ab:c',
      'urn:ietf:wg:oauth:2.0:oob',
      'com.example.app:',
      'https://a.example/cb, javascript:alert(1)',
    ])
      expect([v, redirectUrlsRefusal(v)]).toEqual([
        v,
        expect.stringMatching(/must be an http\(s\) address or one of an app's own scheme/),
      ]);
  });

  it('refuses http(s) addresses without "//" and a host, which the URL parser would quietly complete', () => {
    for (const v of ['https:a.example/cb', 'https:/a.example/cb', 'https:\\\\a.example/cb', 'http:///cb'])
      expect([v, isRedirectUrlList(v)]).toEqual([v, false]);
  });

  it('refuses empty items, whitespace around the value, and hidden characters inside an address', () => {
    expect(redirectUrlsRefusal(',')).toMatch(/empty item/);
    expect(redirectUrlsRefusal('https://a.example/cb,,')).toMatch(/empty item/);
    expect(redirectUrlsRefusal('https://a.example/cb,')).toMatch(/empty item/);
    expect(redirectUrlsRefusal(', https://a.example/cb')).toMatch(/empty item/);
    expect(redirectUrlsRefusal(' https://a.example/cb ')).toMatch(/whitespace/);
    expect(redirectUrlsRefusal('https://a.example/cb\n')).toMatch(/whitespace/);
    for (const v of [
      'a\r\nb: c',
      'https://a.example/c\r\nb',
      'https://a.exa\tmple/cb',
      'https://a.example/c b',
      'https://a.example/c\u0085b',
      'https://a.example/c\u200bb',
      'https://a.example/cb\u00a0,https://b.example/cb',
    ])
      expect([v, redirectUrlsRefusal(v)]).toEqual([
        v,
        expect.stringMatching(/spaces, control characters or invisible/),
      ]);
  });

  it('names the address it refuses', () => {
    expect(redirectUrlsRefusal('https://a.example/cb, mailto:x@y')).toMatch(/^"mailto:x@y" must be/);
  });

  it('splits and trims, leniently for values stored before they were checked', () => {
    expect(splitRedirectUrls(' https://a.example/cb ,, https://b.example/cb ')).toEqual([
      'https://a.example/cb',
      'https://b.example/cb',
    ]);
  });
});
