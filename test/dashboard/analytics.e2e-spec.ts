import { useService } from '../helpers/use-service';
import { GATEWAY, seedUser, SeededUser } from '../helpers/dashboard';

type Rec = Record<string, unknown>;

const rec = (over: Rec = {}): Rec => ({
  timestamp: '2024-03-01T10:15:00Z',
  org_id: 'org1',
  api_id: 'api-a',
  api_name: 'API A',
  path: '/pets',
  method: 'GET',
  code: 200,
  latency: 10,
  upstream_latency: 8,
  request_time: 10,
  oauth_id: 'client-1',
  key: 'key-1',
  alias: 'alias-1',
  url: '/pets?x=1',
  iso_country: 'GB',
  ...over,
});

const activity = (client: string, from: string, to: string, p?: number | string) =>
  `/api/activity/oauthid/${client}/${from}/${to}${p ? `?p=${p}` : ''}`;

describe('analytics: ingest and OAuth-client activity', () => {
  const t = useService();
  let analyst: SeededUser;

  const ingest = (records: unknown) => t.http.post('/gateway/analytics', records, GATEWAY);

  beforeAll(async () => {
    analyst = await seedUser(t, { org: 'org1', permissions: { analytics: 'read' } });
  });

  it('aggregates records spanning several days, APIs and paths into one row per (api, path)', async () => {
    const c = 'client-agg';
    const res = await ingest([
      // api-a /pets: 4 hits over three days (one 404, one 500), one outside the range
      rec({
        oauth_id: c,
        timestamp: '2024-03-01T00:00:00Z',
        latency: 10,
        upstream_latency: 5,
        request_time: 11,
        code: 200,
      }),
      rec({
        oauth_id: c,
        timestamp: '2024-03-02T13:30:00+02:00',
        latency: 30,
        upstream_latency: 20,
        request_time: 31,
        code: 404,
      }),
      rec({
        oauth_id: c,
        timestamp: '2024-03-03T23:59:59.999Z',
        latency: 20,
        upstream_latency: 14,
        request_time: 22,
        code: 500,
        url: '/pets?last=1',
        key: 'key-9',
        alias: 'alias-9',
        iso_country: 'DE',
        api_name: 'API A renamed',
      }),
      rec({
        oauth_id: c,
        timestamp: '2024-03-03T12:00:00Z',
        latency: 40,
        upstream_latency: 1,
        request_time: 41,
        code: 201,
      }),
      rec({ oauth_id: c, timestamp: '2024-03-04T00:00:00Z', latency: 1000, code: 200 }),
      rec({ oauth_id: c, timestamp: '2024-02-29T23:59:59Z', latency: 1000, code: 200 }),
      // api-a /owners: 1 hit
      rec({
        oauth_id: c,
        path: '/owners',
        timestamp: '2024-03-02T08:00:00Z',
        latency: 7,
        upstream_latency: 6,
        request_time: 7.5,
        code: 302,
      }),
      // api-b /pets: 2 hits
      rec({
        oauth_id: c,
        api_id: 'api-b',
        api_name: 'API B',
        timestamp: '2024-03-01T05:00:00Z',
        latency: 3,
        upstream_latency: 2,
        request_time: 3.25,
        code: 200,
      }),
      rec({
        oauth_id: c,
        api_id: 'api-b',
        api_name: 'API B',
        timestamp: '2024-03-01T05:10:00Z',
        latency: 5,
        upstream_latency: 4,
        request_time: 5.75,
        code: 429,
      }),
      // another client, another org: never counted
      rec({ oauth_id: 'someone-else', timestamp: '2024-03-01T10:00:00Z' }),
      rec({ oauth_id: c, org_id: 'org2', timestamp: '2024-03-01T10:00:00Z' }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', ingested: 11 });

    const out = await analyst.http.get(activity(c, '1/3/2024', '3/3/2024'));
    expect(out.status).toBe(200);
    expect(out.body.pages).toBe(1);
    expect(out.body.data).toHaveLength(3);
    const [pets, petsB, owners] = out.body.data;
    expect(pets).toEqual({
      id: {
        day: 0,
        month: 0,
        year: 0,
        hour: 0,
        code: 0,
        api_id: 'api-a',
        api_name: 'API A renamed',
        path: '/pets',
        url: '/pets?last=1',
        key: 'key-9',
        alias: 'alias-9',
        iso_country: 'DE',
      },
      hits: 4,
      success: 2,
      error: 2,
      last_hit: '2024-03-03T23:59:59.999Z',
      latency: 25,
      max_latency: 40,
      min_latency: 10,
      upstream_latency: 10,
      max_upstream_latency: 20,
      min_upstream_latency: 1,
      request_time: 26.25,
      max_request_time: 41,
      min_request_time: 11,
    });
    expect(petsB).toMatchObject({
      id: { api_id: 'api-b', api_name: 'API B', path: '/pets' },
      hits: 2,
      success: 1,
      error: 1,
      latency: 4,
      request_time: 4.5,
      last_hit: '2024-03-01T05:10:00.000Z',
    });
    expect(owners).toMatchObject({
      id: { api_id: 'api-a', path: '/owners' },
      hits: 1,
      success: 1,
      error: 0,
      latency: 7,
      min_latency: 7,
      max_latency: 7,
      request_time: 7.5,
    });

    // one day only, leading zeros accepted
    const day = await analyst.http.get(activity(c, '02/03/2024', '02/03/2024'));
    expect(day.body.data.map((r: any) => [r.id.api_id, r.id.path, r.hits])).toEqual([
      ['api-a', '/owners', 1],
      ['api-a', '/pets', 1],
    ]);
  });

  it('keeps adding to the same rollups across batches', async () => {
    const c = 'client-batches';
    await ingest([rec({ oauth_id: c, latency: 10 })]);
    await ingest([
      rec({ oauth_id: c, latency: 30, timestamp: '2024-03-01T10:45:00Z' }),
      rec({ oauth_id: c, latency: 2, timestamp: '2024-03-01T10:01:00Z', url: '/older' }),
    ]);
    const [row] = (await analyst.http.get(activity(c, '1/3/2024', '1/3/2024'))).body.data;
    expect(row).toMatchObject({
      hits: 3,
      latency: 14,
      max_latency: 30,
      min_latency: 2,
      last_hit: '2024-03-01T10:45:00.000Z',
      id: { url: '/pets?x=1' },
    });
    const [rollups] = await t.db.query(`SELECT count(*)::int AS n FROM analytics_hourly WHERE oauth_id = $1`, [c]);
    expect(rollups.n).toBe(1);
  });

  it('pages 10 rows, most hits first: 0, 1, 10 and 11 rows', async () => {
    for (const n of [0, 1, 10, 11]) {
      const c = `client-paging-${n}`;
      const records: Rec[] = [];
      for (let i = 0; i < n; i++)
        for (let h = 0; h <= i; h++) records.push(rec({ oauth_id: c, path: `/p${String(i).padStart(2, '0')}` }));
      if (records.length) expect((await ingest(records)).status).toBe(200);
      const pages = Math.ceil(n / 10);
      const first = await analyst.http.get(activity(c, '1/3/2024', '1/3/2024'));
      expect([n, first.body.pages]).toEqual([n, pages]);
      expect(first.body.data).toHaveLength(Math.min(n, 10));
      if (n) expect(first.body.data[0]).toMatchObject({ hits: n, id: { path: `/p${String(n - 1).padStart(2, '0')}` } });
      if (n > 10) {
        const second = await analyst.http.get(activity(c, '1/3/2024', '1/3/2024', 2));
        expect(second.body).toMatchObject({ pages: 2, data: [{ hits: 1, id: { path: '/p00' } }] });
      }
      for (const past of [pages + 1, '99999999999999999999', '9'.repeat(400)])
        expect((await analyst.http.get(activity(c, '1/3/2024', '1/3/2024', past))).body).toEqual({ data: [], pages });
    }
  });

  it('answers rows and pages that agree while a batch lands between them', async () => {
    // each round reads a client while its first record is being ingested: every answer is either before it
    // (no rows, 0 pages) or after it (one row, 1 page), never a mix of the two
    const answers: { rows: number; pages: number }[] = [];
    for (let round = 0; round < 40; round++) {
      const c = `client-snapshot-${round}`;
      const reads = Array.from({ length: 6 }, () => analyst.http.get(activity(c, '1/3/2024', '1/3/2024')));
      const [written, ...read] = await Promise.all([ingest([rec({ oauth_id: c })]), ...reads]);
      expect(written.status).toBe(200);
      for (const res of read) answers.push({ rows: res.body.data.length, pages: res.body.pages });
    }
    expect(answers.filter((a) => a.rows !== a.pages)).toEqual([]);
  });

  it('shows another organisation’s client exactly like one without traffic; a super user sees every organisation', async () => {
    await ingest([rec({ oauth_id: 'client-org2', org_id: 'org2' })]);
    expect((await analyst.http.get(activity('client-org2', '1/3/2024', '1/3/2024'))).body).toEqual({
      data: [],
      pages: 0,
    });
    expect((await analyst.http.get(activity('client-nobody', '1/3/2024', '1/3/2024'))).body).toEqual({
      data: [],
      pages: 0,
    });
    const org2 = await seedUser(t, { org: 'org2', permissions: { analytics: 'read' } });
    expect((await org2.http.get(activity('client-org2', '1/3/2024', '1/3/2024'))).body.data).toHaveLength(1);
    const root = await seedUser(t, { org: '' });
    expect((await root.http.get(activity('client-org2', '1/3/2024', '1/3/2024'))).body.data).toHaveLength(1);
  });

  it('serves every day with a four-digit year, 1/1/0001 to 31/12/9999, and counts a hit in its first and last second', async () => {
    const c = 'client-calendar-edges';
    const res = await ingest([
      rec({ oauth_id: c, timestamp: '0001-01-01T00:00:00Z', latency: 1 }),
      rec({ oauth_id: c, timestamp: '9999-12-31T23:59:59.999Z', latency: 3 }),
      // the same instants written with offsets
      rec({ oauth_id: c, timestamp: '0001-01-01T01:30:00+01:00', latency: 1 }),
      rec({ oauth_id: c, timestamp: '9999-12-31T22:59:59-01:00', latency: 3 }),
    ]);
    expect(res.body).toEqual({ status: 'ok', ingested: 4 });

    const last = await analyst.http.get(activity(c, '31/12/9999', '31/12/9999'));
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({
      pages: 1,
      data: [{ hits: 2, latency: 3, last_hit: '9999-12-31T23:59:59.999Z' }],
    });
    const first = await analyst.http.get(activity(c, '1/1/0001', '1/1/0001'));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      pages: 1,
      data: [{ hits: 2, latency: 1, last_hit: '0001-01-01T00:30:00.000Z' }],
    });
    const since1970 = await analyst.http.get(activity(c, '1/1/1970', '31/12/9999'));
    expect(since1970.status).toBe(200);
    expect(since1970.body).toMatchObject({ pages: 1, data: [{ hits: 2, latency: 3 }] });
    expect((await analyst.http.get(activity(c, '1/1/0001', '31/12/9999'))).body).toMatchObject({
      pages: 1,
      data: [{ hits: 4, latency: 2, min_latency: 1, max_latency: 3 }],
    });
    expect((await analyst.http.get(activity(c, '30/12/9999', '30/12/9999'))).body).toEqual({ data: [], pages: 0 });
  });

  it('refuses latencies over 24 hours, so a rollup never overflows: the same batch twice is a 400 each time', async () => {
    const huge = [
      rec({
        oauth_id: 'ovf',
        timestamp: '2024-05-01T10:15:00Z',
        latency: 1e308,
        upstream_latency: 1e308,
        request_time: 1e308,
      }),
    ];
    for (let i = 0; i < 2; i++) {
      const res = await ingest(huge);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        status: 'error',
        message:
          'record 0: latency must be a number of ms from 0 to 86400000 (24 hours); record 0: upstream_latency must be a number of ms from 0 to 86400000 (24 hours); record 0: request_time must be a number of ms from 0 to 86400000 (24 hours)',
      });
    }
    // the hour is untouched, and takes records as usual
    const ok = rec({ oauth_id: 'ovf', timestamp: '2024-05-01T10:15:00Z', latency: 5 });
    expect((await ingest([ok, ok])).status).toBe(200);
    expect((await analyst.http.get(activity('ovf', '1/5/2024', '1/5/2024'))).body).toMatchObject({
      pages: 1,
      data: [{ hits: 2, latency: 5, max_latency: 5 }],
    });
  });

  it('folds many records of the longest latency into one hourly rollup, batch after batch', async () => {
    const c = 'client-longest';
    const day = 86_400_000;
    const batch = Array.from({ length: 10_000 }, () =>
      rec({ oauth_id: c, timestamp: '2024-05-02T10:15:00Z', latency: day, upstream_latency: day, request_time: day }),
    );
    for (let i = 0; i < 3; i++) expect((await ingest(batch)).body).toEqual({ status: 'ok', ingested: 10_000 });
    const [rollup] = await t.db.query(`SELECT hits::int, latency_sum FROM analytics_hourly WHERE oauth_id = $1`, [c]);
    expect(rollup).toEqual({ hits: 30_000, latency_sum: 30_000 * day });
    expect((await analyst.http.get(activity(c, '2/5/2024', '2/5/2024'))).body).toMatchObject({
      pages: 1,
      data: [
        { hits: 30_000, latency: day, max_latency: day, min_latency: day, upstream_latency: day, request_time: day },
      ],
    });
  });

  it('reads rollups that took latencies near the largest double before they were bounded', async () => {
    // what ingest stored before latencies were bounded: sums each a finite double, but not their sum
    const c = 'client-before-the-bound';
    for (const hour of ['2024-05-03T10:00:00Z', '2024-05-03T11:00:00Z'])
      await t.db.query(
        `INSERT INTO analytics_hourly (oauth_id, org_id, hour, api_id, path, code, hits,
                latency_sum, latency_min, latency_max, upstream_latency_sum, upstream_latency_min, upstream_latency_max,
                request_time_sum, request_time_min, request_time_max, last_hit)
         VALUES ($1, 'org1', $2, 'api-a', '/pets', 200, 1, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308,
                 1e308, 1e308, 1e308, $2)`,
        [c, hour],
      );
    const res = await analyst.http.get(activity(c, '3/5/2024', '3/5/2024'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      pages: 1,
      data: [{ hits: 2, latency: 1e308, max_latency: 1e308, request_time: 1e308 }],
    });
    // and they take new records
    expect((await ingest([rec({ oauth_id: c, timestamp: '2024-05-03T10:30:00Z', latency: 1 })])).status).toBe(200);
    expect((await analyst.http.get(activity(c, '3/5/2024', '3/5/2024'))).body.data[0].hits).toBe(3);
  });

  it('takes a batch of 10 000 records in one request', async () => {
    const records: Rec[] = [];
    for (let i = 0; i < 10_000; i++) {
      records.push(
        rec({
          oauth_id: 'client-big',
          api_id: `api-${i % 7}`,
          path: `/r${i % 13}`,
          code: i % 5 === 0 ? 503 : 200,
          timestamp: new Date(Date.UTC(2024, 4, 1 + (i % 3), i % 24, i % 60)).toISOString(),
          latency: i % 100,
        }),
      );
    }
    const res = await ingest(records);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', ingested: 10_000 });
    const all: any[] = [];
    const first = await analyst.http.get(activity('client-big', '1/5/2024', '3/5/2024'));
    expect(first.body.pages).toBe(10); // 7 × 13 = 91 (api, path) pairs
    for (let p = 1; p <= first.body.pages; p++)
      all.push(...(await analyst.http.get(activity('client-big', '1/5/2024', '3/5/2024', p))).body.data);
    expect(all).toHaveLength(91);
    expect(all.reduce((s, r) => s + r.hits, 0)).toBe(10_000);
    expect(all.reduce((s, r) => s + r.error, 0)).toBe(2_000);
  });

  describe('bad input', () => {
    it.each([
      ['not an array', { records: [] }, 'the body must be a JSON array of analytics records'],
      ['a record that is not an object', [1], 'record 0: must be an object'],
      [
        'a missing api_id and bad code',
        [rec(), rec({ api_id: undefined, code: 99 })],
        'record 1: api_id is required; record 1: code must be an integer HTTP status between 100 and 599',
      ],
      ['a bad timestamp', [rec({ timestamp: '2024-13-45' })], 'record 0: timestamp must be an RFC 3339 date-time'],
      [
        'a negative latency',
        [rec({ latency: -1, request_time: 'x' })],
        'record 0: latency must be a number of ms from 0 to 86400000 (24 hours); record 0: request_time must be a number of ms from 0 to 86400000 (24 hours)',
      ],
      ...[
        '0000-01-01T00:00:00Z',
        '0000-12-31T23:59:59Z',
        '0001-01-01T00:30:00+01:00',
        '9999-12-31T23:59:60Z',
        '9999-12-31T23:30:00-01:00',
      ].map((timestamp): [string, unknown, string] => [
        `a timestamp outside years 0001 to 9999 in UTC (${timestamp})`,
        [rec(), rec({ timestamp })],
        'record 1: timestamp must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z',
      ]),
      [
        'a non-string oauth_id',
        [rec({ oauth_id: 5 })],
        'record 0: oauth_id must be a string of at most 256 characters',
      ],
    ])('refuses %s with 400 and stores nothing', async (_name, body, message) => {
      const before = await t.db.query(`SELECT coalesce(sum(hits), 0)::int AS n FROM analytics_hourly`);
      const res = await ingest(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'error', message });
      expect(await t.db.query(`SELECT coalesce(sum(hits), 0)::int AS n FROM analytics_hourly`)).toEqual(before);
    });

    it('takes key fields at every character limit in ASCII, and refuses them past 2600 bytes of UTF-8', async () => {
      const full = {
        oauth_id: 'o'.repeat(256),
        org_id: 'g'.repeat(128),
        api_id: 'a'.repeat(128),
        path: '/' + 'p'.repeat(2047),
      };
      expect((await ingest([rec(full)])).status).toBe(200);
      // random CJK: 3 bytes a character, and no compression to fit it in the rollup's key
      const cjk =
        '/' +
        Array.from({ length: 2047 }, () => String.fromCharCode(0x4e00 + Math.floor(Math.random() * 0x5000))).join('');
      const res = await ingest([rec(), rec({ path: cjk })]);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(
        /^record 1: oauth_id, org_id, api_id, path must come to at most 2600 bytes of UTF-8 together \(they are \d+\)$/,
      );
    });

    it('reports at most 20 reasons', async () => {
      const res = await ingest(Array.from({ length: 50 }, () => ({})));
      expect(res.status).toBe(400);
      const reasons = res.body.message.split('; ');
      expect(reasons).toHaveLength(21);
      expect(reasons[20]).toMatch(/^and \d+ more error\(s\)$/);
    });

    it('answers a non-JSON body with 400 request malformed', async () => {
      const res = await t.http.send('POST', '/gateway/analytics', { raw: '[{"api_id": ', headers: GATEWAY });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'error', message: 'request malformed' });
    });

    it('takes 5 MB but refuses more than 32 MiB with 413', async () => {
      const five = Array.from({ length: 12_000 }, () => rec({ url: 'u'.repeat(400) }));
      expect(JSON.stringify(five).length).toBeGreaterThan(5 * 1024 * 1024);
      expect((await ingest(five)).status).toBe(200);
      const huge = `[${'1,'.repeat(17 * 1024 * 1024)}1]`;
      const res = await t.http.send('POST', '/gateway/analytics', { raw: huge, headers: GATEWAY });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ status: 'error', message: 'request body too large' });
    });

    it.each([
      ['31/2/2024', '1/3/2024', 'start date 31/2/2024 is not a date (day/month/year)'],
      ['1/3/2024', '0/3/2024', 'end date 0/3/2024 is not a date (day/month/year)'],
      ['1/13/2024', '1/1/2025', 'start date 1/13/2024 is not a date (day/month/year)'],
      ['x/3/2024', '1/3/2024', 'start date x/3/2024 is not a date (day/month/year)'],
      ['1/3/24', '1/3/2024', 'start date 1/3/24 is not a date (day/month/year)'],
      ['2/3/2024', '1/3/2024', 'the start date is after the end date'],
    ])('refuses %s – %s with 400', async (from, to, message) => {
      const res = await analyst.http.get(activity('client-1', from, to));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ Status: 'Error', Message: message, Meta: null });
    });

    it.each([
      ['0', 'p must be 1 or more'],
      ['-1', 'p must be 1 or more'],
      ...['abc', '1.5', '1e30', '1e2', '%2B1', '+1', '01', '0x1', '%201', ''].map((p) => [
        p,
        'p must be a whole page number in plain decimal digits (1, 2, ...)',
      ]),
    ])('refuses p=%s with 400', async (p, message) => {
      const res = await analyst.http.get(`${activity('client-1', '1/3/2024', '1/3/2024')}?p=${p}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ Status: 'Error', Message: message, Meta: null });
    });
  });
});
