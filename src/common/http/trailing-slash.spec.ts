import { withoutTrailingSlash } from './trailing-slash';

describe('withoutTrailingSlash', () => {
  it("drops one trailing slash of a family's path, keeping the query", () => {
    expect(withoutTrailingSlash('/api/apis/?p=1')).toBe('/api/apis?p=1');
    expect(withoutTrailingSlash('/api/apis/')).toBe('/api/apis');
    expect(withoutTrailingSlash('/portal-api/apps/7/')).toBe('/portal-api/apps/7');
    expect(withoutTrailingSlash('/gateway/apis/oas/x/?upstreamURL=http://a/b/')).toBe(
      '/gateway/apis/oas/x?upstreamURL=http://a/b/',
    );
    expect(withoutTrailingSlash('/admin/users/')).toBe('/admin/users');
    expect(withoutTrailingSlash('http://host/api/apis/?p=2')).toBe('http://host/api/apis?p=2');
  });

  it('leaves every other target as it is', () => {
    for (const url of ['/api/apis', '/api/apis?q=a/', '/api/apis//', '/console/', '/queues/', '/docs/', '/', '/x/'])
      expect([url, withoutTrailingSlash(url)]).toEqual([url, url]);
  });
});
