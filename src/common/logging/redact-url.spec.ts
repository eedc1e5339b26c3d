import { redactUrl } from './logging.module';

describe('redactUrl', () => {
  it('keeps the path and replaces any query string', () => {
    expect(redactUrl('/portal-api/apps?authorization=abc&p=1')).toBe('/portal-api/apps?[redacted]');
    expect(redactUrl('/x?tok3n')).toBe('/x?[redacted]');
    expect(redactUrl('/x?')).toBe('/x?[redacted]');
    expect(redactUrl('/x')).toBe('/x');
    expect(redactUrl(undefined)).toBe('');
  });
});
