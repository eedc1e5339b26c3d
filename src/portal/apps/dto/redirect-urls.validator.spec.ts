import { isRedirectUrlList, splitRedirectUrls } from './redirect-urls.validator';

describe('RedirectURLs', () => {
  it('accepts "", one absolute address, several separated by commas, and app schemes', () => {
    for (const v of [
      '',
      'https://a.example/cb',
      'https://a.example/cb, http://localhost:8080/cb',
      'com.example.app:/oauth',
    ])
      expect(isRedirectUrlList(v)).toBe(true);
  });

  it('refuses relative addresses, fragments and non-strings', () => {
    for (const v of ['/cb', 'a.example/cb', 'https://a.example/cb#x', 'https://ok.example,nope', 5, null])
      expect(isRedirectUrlList(v)).toBe(false);
  });

  it('splits and trims', () => {
    expect(splitRedirectUrls(' https://a.example/cb ,, https://b.example/cb ')).toEqual([
      'https://a.example/cb',
      'https://b.example/cb',
    ]);
  });
});
