// The portal routes' own time form: `YYYY-MM-DD HH:MM`, in UTC.
const PORTAL_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})$/;

/**
 * Every time the console shows, in one form: ISO 8601 in UTC to the second, `2026-11-22T10:15:03Z` (the form the
 * recover field takes), never a locale's format or time zone. Reads the webhook routes' RFC 3339 times and the
 * portal routes' `YYYY-MM-DD HH:MM` (UTC); anything else is shown as it came, nothing as `—`.
 */
export function formatTime(value: string | null | undefined): string {
  if (!value) return '—';
  const portal = PORTAL_TIME.exec(value);
  const d = portal
    ? new Date(Date.UTC(+portal[1], +portal[2] - 1, +portal[3], +portal[4], +portal[5]))
    : /(?:[Zz]|[+-]\d{2}:\d{2})$/.test(value)
      ? new Date(value)
      : new Date(NaN); // without a zone the browser would guess its own
  if (Number.isNaN(d.getTime())) return value;
  return `${d.toISOString().slice(0, 19)}Z`;
}
