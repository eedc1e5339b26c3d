import { crossSiteWriteRefusal } from './same-origin';

const host = '127.0.0.1:3000';

describe('Bull Board changes from another site', () => {
  it('refuses a change another site’s page sends with the browser’s remembered credentials', () => {
    // a form on another site posting JSON as text/plain
    const form = {
      host,
      origin: 'https://attacker.example',
      'sec-fetch-site': 'cross-site',
      'content-type': 'text/plain',
      'content-length': '40',
    };
    expect(crossSiteWriteRefusal('POST', form)?.status).toBe(403);
    expect(crossSiteWriteRefusal('PUT', { host, origin: 'http://127.0.0.1:3001' })?.status).toBe(403);
    expect(crossSiteWriteRefusal('PUT', { host, origin: 'null' })?.status).toBe(403);
    expect(crossSiteWriteRefusal('PUT', { host, 'sec-fetch-site': 'same-site' })?.status).toBe(403);
  });

  it('refuses a body that is not JSON, which only a form would send', () => {
    const body = { host, 'content-length': '12' };
    expect(crossSiteWriteRefusal('POST', { ...body, 'content-type': 'text/plain' })?.status).toBe(415);
    expect(
      crossSiteWriteRefusal('POST', { ...body, 'content-type': 'application/x-www-form-urlencoded' })?.status,
    ).toBe(415);
    expect(crossSiteWriteRefusal('POST', body)?.status).toBe(415);
  });

  it('takes the board’s own page, a script, and every read', () => {
    const json = { 'content-type': 'application/json', 'content-length': '20' };
    expect(
      crossSiteWriteRefusal('POST', { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin', ...json }),
    ).toBe(undefined);
    expect(crossSiteWriteRefusal('PUT', { host, origin: `http://${host}` })).toBeUndefined();
    expect(crossSiteWriteRefusal('PUT', { host })).toBeUndefined();
    // behind a proxy that rewrites Host, the browser's word on the request's site decides
    expect(
      crossSiteWriteRefusal('PUT', { host, origin: 'https://ops.example', 'sec-fetch-site': 'same-origin' }),
    ).toBeUndefined();
    expect(crossSiteWriteRefusal('PATCH', { host, ...json })).toBeUndefined();
    expect(
      crossSiteWriteRefusal('GET', { host, origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' }),
    ).toBe(undefined);
  });
});
