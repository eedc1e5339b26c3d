import { FIRST_FOUR_DIGIT_YEAR_MS, LAST_FOUR_DIGIT_YEAR_MS, parseRfc3339 } from '../../common/http/time';
import { codePointLength } from '../../common/http/max-length.decorator';

/** One request record as a gateway pushes it to POST /gateway/analytics; latencies in milliseconds. */
export interface AnalyticsRecord {
  timestamp: Date;
  org_id: string;
  api_id: string;
  api_name: string;
  path: string;
  method: string;
  code: number;
  latency: number;
  upstream_latency: number;
  request_time: number;
  oauth_id: string;
  key: string;
  alias: string;
  url: string;
  iso_country: string;
}

/** Reasons reported for a rejected batch, at most (the batch is rejected as a whole). */
export const MAX_REPORTED_ERRORS = 20;

type Field = { name: keyof AnalyticsRecord; required: boolean; max: number };
/** The text fields of a record: whether each is required (and then not empty), and its most characters. */
export const STRING_FIELDS: Field[] = [
  { name: 'org_id', required: false, max: 128 },
  { name: 'api_id', required: true, max: 128 },
  { name: 'api_name', required: false, max: 512 },
  { name: 'path', required: true, max: 2048 },
  { name: 'method', required: false, max: 16 },
  { name: 'oauth_id', required: false, max: 256 },
  { name: 'key', required: false, max: 256 },
  { name: 'alias', required: false, max: 256 },
  { name: 'url', required: false, max: 4096 },
  { name: 'iso_country', required: false, max: 8 },
];
const NUMBER_FIELDS = ['latency', 'upstream_latency', 'request_time'] as const;
/** The HTTP statuses a record's code may be. */
export const MIN_STATUS = 100;
export const MAX_STATUS = 599;

/** The fields keying the hourly rollup, and the most UTF-8 bytes they take together (ASCII at every limit fits). */
const KEY_FIELDS = ['oauth_id', 'org_id', 'api_id', 'path'] as const;
const MAX_KEY_BYTES = 2600;

/**
 * The longest latency taken, in ms (24 hours): no proxied request lasts longer, so a larger value is a broken clock or
 * a unit mistake. It also keeps a rollup's sums finite doubles however many hits (a bigint) it folds.
 */
export const MAX_LATENCY_MS = 24 * 60 * 60 * 1000;
const TIMESTAMP_RANGE = '0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z';

/**
 * Validates a batch: a JSON array of records, every field typed and bounded. Returns the records, or
 * the reasons (each naming the record's index and field) the batch cannot be taken.
 */
export function parseAnalyticsBatch(body: unknown): { records: AnalyticsRecord[]; errors: string[] } {
  if (!Array.isArray(body)) return { records: [], errors: ['the body must be a JSON array of analytics records'] };
  const records: AnalyticsRecord[] = [];
  const errors: string[] = [];
  let errorCount = 0;
  const fail = (msg: string) => {
    errorCount++;
    if (errors.length < MAX_REPORTED_ERRORS) errors.push(msg);
  };

  body.forEach((raw: unknown, i) => {
    const at = `record ${i}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return fail(`${at}: must be an object`);
    const r = raw as Record<string, unknown>;
    let ok = true;
    const out = {} as Record<string, unknown>;

    const time = parseRfc3339(r.timestamp);
    if (!time) {
      ok = false;
      fail(`${at}: timestamp must be an RFC 3339 date-time`);
    } else if (time.getTime() < FIRST_FOUR_DIGIT_YEAR_MS || time.getTime() > LAST_FOUR_DIGIT_YEAR_MS) {
      // an offset can move a four-digit local year out of them (0001-01-01T00:30:00+01:00 is in year 0 in UTC);
      // the dashboard reads years 0001 to 9999 only, and PostgreSQL would refuse the instant as it is sent
      ok = false;
      fail(`${at}: timestamp must lie between ${TIMESTAMP_RANGE}`);
    } else out.timestamp = time;

    for (const f of STRING_FIELDS) {
      const v = r[f.name];
      if (v === undefined || v === null) {
        if (f.required) {
          ok = false;
          fail(`${at}: ${f.name} is required`);
        } else out[f.name] = '';
      } else if (typeof v !== 'string' || codePointLength(v) > f.max || (f.required && v === '')) {
        ok = false;
        fail(`${at}: ${f.name} must be a ${f.required ? 'non-empty ' : ''}string of at most ${f.max} characters`);
      } else out[f.name] = v;
    }

    // the hourly rollup is keyed by them: a B-tree entry holds about 2.7 KB, which text outside ASCII can pass well
    // within the character limits (2047 CJK characters are 6 KB)
    const keyBytes = KEY_FIELDS.reduce((n, name) => n + Buffer.byteLength(String(out[name] ?? ''), 'utf8'), 0);
    if (keyBytes > MAX_KEY_BYTES) {
      ok = false;
      fail(
        `${at}: ${KEY_FIELDS.join(', ')} must come to at most ${MAX_KEY_BYTES} bytes of UTF-8 together (they are ${keyBytes})`,
      );
    }

    if (typeof r.code !== 'number' || !Number.isInteger(r.code) || r.code < MIN_STATUS || r.code > MAX_STATUS) {
      ok = false;
      fail(`${at}: code must be an integer HTTP status between ${MIN_STATUS} and ${MAX_STATUS}`);
    } else out.code = r.code;

    for (const name of NUMBER_FIELDS) {
      const v = r[name];
      if (typeof v !== 'number' || !(v >= 0 && v <= MAX_LATENCY_MS)) {
        ok = false;
        fail(`${at}: ${name} must be a number of ms from 0 to ${MAX_LATENCY_MS} (24 hours)`);
      } else out[name] = v;
    }
    if (ok) records.push(out as unknown as AnalyticsRecord);
  });
  if (errorCount > errors.length) errors.push(`and ${errorCount - errors.length} more error(s)`);
  return { records: errors.length ? [] : records, errors };
}
