import { redactUrl } from './logging.module';

describe('redactUrl', () => {
  it('keeps the path and replaces any query string', () => {
    expect(redactUrl('/portal-api/apps?authorization=abc&p=1')).toBe('/portal-api/apps?[redacted]');
    expect(redactUrl('/x?tok3n')).toBe('/x?[redacted]');
    expect(redactUrl('/x?')).toBe('/x?[redacted]');
    expect(redactUrl('/x')).toBe('/x');
    expect(redactUrl(undefined)).toBe('');
  });

  it('keeps only the path of a target in absolute form: no user, password or host', () => {
    expect(redactUrl('http://user:secret@127.0.0.1:3000/api/apis?q=1')).toBe('/api/apis?[redacted]');
    expect(redactUrl('https://host/portal-api/apps')).toBe('/portal-api/apps');
    expect(redactUrl('http://user:secret@host')).toBe('/');
    expect(redactUrl('http://user:secret@host?x')).toBe('/?[redacted]');
  });
});
