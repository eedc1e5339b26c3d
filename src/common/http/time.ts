const pad = (n: number) => String(n).padStart(2, '0');

/** Portal times: `YYYY-MM-DD HH:MM` in UTC (interface §2). Null/undefined → "". */
export function portalTime(d: Date | null | undefined): string {
  if (!d) return '';
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** Dashboard times: RFC 3339; unset ones are `0001-01-01T00:00:00Z` (decisions §2). */
export function rfc3339(d: Date | null | undefined): string {
  return d ? d.toISOString() : ZERO_TIME;
}
