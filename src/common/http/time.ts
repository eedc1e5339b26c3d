const pad = (n: number) => String(n).padStart(2, '0');

/** What a portal time that is not set reads as: clients parse every portal time, so never "". */
export const UNSET_PORTAL_TIME = '1970-01-01 00:00';

/** Portal times: `YYYY-MM-DD HH:MM` in UTC. Null/undefined (not set) → `1970-01-01 00:00`. */
export function portalTime(d: Date | null | undefined): string {
  if (!d) return UNSET_PORTAL_TIME;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Dashboard and event times: RFC 3339 in UTC with milliseconds; unset ones are `0001-01-01T00:00:00Z`. */
export function rfc3339(d: Date | null | undefined): string {
  return d ? d.toISOString() : ZERO_TIME;
}

/**
 * The first and last instant (ms) whose year, in UTC, has four digits: 0001-01-01T00:00:00Z and
 * 9999-12-31T23:59:59.999Z. Only these does toISOString write as PostgreSQL reads them: it writes year 0 as `0000`
 * (PostgreSQL counts 1 BC before AD 1 and has no year 0) and years past 9999 as `+010000`.
 */
export const FIRST_FOUR_DIGIT_YEAR_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const LAST_FOUR_DIGIT_YEAR_MS = Date.parse('9999-12-31T23:59:59.999Z');

// full-date, then "T" (RFC 3339 also allows "t", and a space for readability), partial-time with seconds and an
// optional fraction, then "Z" ("z") or a numeric offset: nothing may be left out, so no local time is guessed.
const RFC3339_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** What an input that must be an RFC 3339 date-time says when it is not. */
export function notRfc3339Message(field: string): string {
  return `${field} must be an RFC 3339 date-time with seconds and a time zone, e.g. 2026-11-22T10:00:00Z`;
}

/**
 * The instant an RFC 3339 date-time names, or undefined when `value` is not one: a date without a time, a
 * time without seconds or without an offset, or a field out of range (month 13, 30 February, hour 24, offset
 * +24:00) is refused, never rolled over. A leap second (`:60`) is accepted where one can be inserted, at
 * 23:59:60 UTC on the last day of a month, and read as the first instant of the next day, as PostgreSQL
 * reads it. Fractions beyond milliseconds are cut off.
 */
export function parseRfc3339(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const m = RFC3339_DATE_TIME.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const [offsetHours, offsetMinutes] = m[8] ? [Number(m[9]), Number(m[10])] : [0, 0];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const local = new Date(0);
  // setUTCFullYear, unlike Date.UTC, takes years 0-99 as they are
  local.setUTCFullYear(year, month - 1, day);
  if (local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day) return undefined;
  const offsetMs = (m[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  // the instant of second 59 when the second is a leap second: the leap second is the one after it
  const at = local.getTime() + ((hour * 60 + minute) * 60 + Math.min(second, 59)) * 1000 - offsetMs;
  if (second === 60) {
    const next = new Date(at + 1000);
    if (next.getUTCDate() !== 1 || next.getUTCHours() !== 0 || next.getUTCMinutes() !== 0 || next.getUTCSeconds())
      return undefined;
    return new Date(next.getTime() + ms);
  }
  return new Date(at + ms);
}
