import { MAX_LATENCY_MS, MAX_REPORTED_ERRORS, parseAnalyticsBatch } from './analytics-record';

const valid = {
  timestamp: '2024-03-01T10:15:00.123+01:00',
  org_id: 'o',
  api_id: 'a',
  api_name: 'A',
  path: '/p',
  method: 'GET',
  code: 200,
  latency: 1.5,
  upstream_latency: 1,
  request_time: 2,
  oauth_id: 'c',
  key: 'k',
  alias: 'al',
  url: '/p?x',
  iso_country: 'GB',
};

describe('parseAnalyticsBatch', () => {
  it('takes valid records, defaulting optional strings to empty', () => {
    const { records, errors } = parseAnalyticsBatch([
      valid,
      {
        timestamp: '2024-03-01T00:00:00Z',
        api_id: 'a',
        path: '/',
        code: 503,
        latency: 0,
        upstream_latency: 0,
        request_time: 0,
      },
    ]);
    expect(errors).toEqual([]);
    expect(records[0]).toEqual({ ...valid, timestamp: new Date('2024-03-01T09:15:00.123Z') });
    expect(records[1]).toMatchObject({
      org_id: '',
      oauth_id: '',
      api_name: '',
      key: '',
      alias: '',
      url: '',
      iso_country: '',
      method: '',
    });
  });

  it('takes the first and last instant of years 0001 to 9999 in UTC, however written', () => {
    const at = (...timestamps: string[]) =>
      parseAnalyticsBatch(timestamps.map((timestamp) => ({ ...valid, timestamp }))).records.map((r) =>
        r.timestamp.toISOString(),
      );
    expect(at('0001-01-01T00:00:00Z', '0001-01-01T01:00:00+01:00', '0000-12-31T23:00:00-01:00')).toEqual([
      '0001-01-01T00:00:00.000Z',
      '0001-01-01T00:00:00.000Z',
      '0001-01-01T00:00:00.000Z',
    ]);
    expect(at('9999-12-31T23:59:59.999Z', '9999-12-31T22:59:59.999-01:00', '9999-12-31T23:59:59.999-00:00')).toEqual([
      '9999-12-31T23:59:59.999Z',
      '9999-12-31T23:59:59.999Z',
      '9999-12-31T23:59:59.999Z',
    ]);
  });

  it('takes latencies up to 24 hours, a bound whose sum over more hits than a rollup can count is still a finite double', () => {
    const day = { latency: MAX_LATENCY_MS, upstream_latency: MAX_LATENCY_MS, request_time: MAX_LATENCY_MS };
    expect(MAX_LATENCY_MS).toBe(86_400_000);
    expect(parseAnalyticsBatch([{ ...valid, ...day }]).records[0]).toMatchObject(day);
    // a rollup's hits are a bigint (at most 2^63 - 1), and its sums double precision
    expect(Number.isFinite(MAX_LATENCY_MS * 2 ** 63)).toBe(true);
  });

  it('takes an empty batch', () => {
    expect(parseAnalyticsBatch([])).toEqual({ records: [], errors: [] });
  });

  it.each<[Record<string, unknown>, string]>([
    [{ timestamp: 'yesterday' }, 'record 0: timestamp must be an RFC 3339 date-time'],
    [{ timestamp: '2024-02-30T00:00:00Z' }, 'record 0: timestamp must be an RFC 3339 date-time'],
    [{ timestamp: '2024-03-01T24:00:00Z' }, 'record 0: timestamp must be an RFC 3339 date-time'],
    [{ timestamp: '2024-03-01T10:00:00+25:00' }, 'record 0: timestamp must be an RFC 3339 date-time'],
    [{ timestamp: 1709287200 }, 'record 0: timestamp must be an RFC 3339 date-time'],
    ...['0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999Z', '0001-01-01T00:59:59+01:00'].map(
      (timestamp): [Record<string, unknown>, string] => [
        { timestamp },
        'record 0: timestamp must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z',
      ],
    ),
    ...['9999-12-31T23:59:60Z', '9999-12-31T23:00:00-01:00', '9999-12-31T23:59:59.999-00:01'].map(
      (timestamp): [Record<string, unknown>, string] => [
        { timestamp },
        'record 0: timestamp must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z',
      ],
    ),
    [{ api_id: '' }, 'record 0: api_id must be a non-empty string of at most 128 characters'],
    [{ path: undefined }, 'record 0: path is required'],
    [{ code: 200.5 }, 'record 0: code must be an integer HTTP status between 100 and 599'],
    [{ code: '200' }, 'record 0: code must be an integer HTTP status between 100 and 599'],
    [{ latency: Number.NaN }, 'record 0: latency must be a number of ms from 0 to 86400000 (24 hours)'],
    [
      { upstream_latency: undefined },
      'record 0: upstream_latency must be a number of ms from 0 to 86400000 (24 hours)',
    ],
    [{ latency: -0.001 }, 'record 0: latency must be a number of ms from 0 to 86400000 (24 hours)'],
    [{ latency: 86_400_000.001 }, 'record 0: latency must be a number of ms from 0 to 86400000 (24 hours)'],
    [{ upstream_latency: 1e308 }, 'record 0: upstream_latency must be a number of ms from 0 to 86400000 (24 hours)'],
    [{ request_time: Number.MAX_VALUE }, 'record 0: request_time must be a number of ms from 0 to 86400000 (24 hours)'],
    [{ request_time: Infinity }, 'record 0: request_time must be a number of ms from 0 to 86400000 (24 hours)'],
    [{ iso_country: 'GBRGBRGBR' }, 'record 0: iso_country must be a string of at most 8 characters'],
  ])('refuses %j', (change, message) => {
    expect(parseAnalyticsBatch([{ ...valid, ...change }])).toEqual({ records: [], errors: [message] });
  });

  it('refuses the whole batch for one bad record, and caps the reasons', () => {
    expect(parseAnalyticsBatch([valid, { ...valid, code: 0 }]).records).toEqual([]);
    const { errors } = parseAnalyticsBatch(Array.from({ length: 30 }, () => null));
    expect(errors).toHaveLength(MAX_REPORTED_ERRORS + 1);
    expect(errors.at(-1)).toBe('and 10 more error(s)');
  });

  it('refuses anything but an array', () => {
    expect(parseAnalyticsBatch({}).errors).toEqual(['the body must be a JSON array of analytics records']);
  });
});
