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
