const DAY_MS = 24 * 60 * 60 * 1000;

/** How a day or a month is written in a path (with or without leading zero), and a year. */
export const DAY_OR_MONTH = /^\d{1,2}$/;
export const YEAR = /^\d{4}$/;

/** A calendar day from path segments (decimal, with or without leading zero); undefined when impossible. */
export function parseDay(day: string, month: string, year: string): Date | undefined {
  if (!DAY_OR_MONTH.test(day) || !DAY_OR_MONTH.test(month) || !YEAR.test(year)) return undefined;
  const d = Number(day);
  const m = Number(month);
  const y = Number(year);
  if (y < 1 || m < 1 || m > 12 || d < 1) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, m - 1, d);
  // a day past the month's end rolls over: 31/2 becomes 2 or 3 March
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return undefined;
  return date;
}

/**
 * From the start day 00:00 UTC to the end of the end day, as [from, to).
 * Returns the reasons instead when a date is impossible or the start is after the end.
 */
export function parseDayRange(
  start: [string, string, string],
  end: [string, string, string],
): { from: Date; to: Date } | { errors: string[] } {
  const from = parseDay(...start);
  const last = parseDay(...end);
  const errors: string[] = [];
  if (!from) errors.push(`start date ${start.join('/')} is not a date (day/month/year)`);
  if (!last) errors.push(`end date ${end.join('/')} is not a date (day/month/year)`);
  if (!from || !last) return { errors };
  if (from.getTime() > last.getTime()) return { errors: ['the start date is after the end date'] };
  return { from, to: new Date(last.getTime() + DAY_MS) };
}
