import { decide, jitter, MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry-policy';

const schedule = [0, 5, 300, 1800];
const mid = () => 0.5; // no jitter

describe('retry policy', () => {
  it('treats any 2xx as delivered', () => {
    for (const code of [200, 201, 204, 299])
      expect(decide({ statusCode: code, error: null }, 1, schedule, mid)).toEqual({ kind: 'delivered' });
  });

  it('retries 3xx, 4xx, 5xx, timeouts and network errors on the schedule', () => {
    expect(decide({ statusCode: 302, error: 'http_status' }, 1, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 5000,
    });
    expect(decide({ statusCode: 500, error: 'http_status' }, 2, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 300000,
    });
    expect(decide({ statusCode: null, error: 'timeout' }, 3, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 1800000,
    });
    expect(decide({ statusCode: null, error: 'connection' }, 1, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 5000,
    });
  });

  it('fails for good once the schedule is exhausted', () => {
    expect(decide({ statusCode: 500, error: 'http_status' }, 4, schedule, mid)).toEqual({ kind: 'final' });
  });

  it('disables the webhook on 410 and gives up at once on a blocked address', () => {
    expect(decide({ statusCode: 410, error: 'http_status' }, 1, schedule, mid)).toEqual({ kind: 'disable' });
    expect(decide({ statusCode: null, error: 'blocked_address' }, 1, schedule, mid)).toEqual({ kind: 'final' });
  });

  it('honours Retry-After on 429 and 503, bounded, and never retries sooner than the schedule', () => {
    expect(decide({ statusCode: 429, error: 'http_status', retryAfter: '7' }, 1, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 7000,
    });
    for (const retryAfter of ['0', '2', 'Thu, 01 Jan 1970 00:00:00 GMT'])
      expect(decide({ statusCode: 503, error: 'http_status', retryAfter }, 1, schedule, mid)).toEqual({
        kind: 'retry',
        delayMs: 5000,
      });
    expect(decide({ statusCode: 503, error: 'http_status', retryAfter: '999999' }, 1, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: MAX_RETRY_AFTER_MS,
    });
    expect(decide({ statusCode: 500, error: 'http_status', retryAfter: '7' }, 1, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 5000,
    });
    expect(decide({ statusCode: 429, error: 'http_status', retryAfter: 'soon' }, 1, schedule, mid)).toEqual({
      kind: 'retry',
      delayMs: 5000,
    });
  });

  it('applies ±20 % jitter', () => {
    expect(jitter(10000, () => 0)).toBe(8000);
    expect(jitter(10000, () => 1)).toBe(12000);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10000);
    expect(parseRetryAfter('nonsense', now)).toBeNull();
  });
});
