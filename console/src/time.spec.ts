import { formatTime } from './time';

describe('the console time formatter', () => {
  it('shows every time as ISO 8601 in UTC to the second, whatever form the route answered in', () => {
    // the webhook routes' RFC 3339, in UTC and with an offset
    expect(formatTime('2026-11-22T10:15:03.481Z')).toBe('2026-11-22T10:15:03Z');
    expect(formatTime('2026-11-22T12:15:03+02:00')).toBe('2026-11-22T10:15:03Z');
    // the portal routes' YYYY-MM-DD HH:MM, which is UTC (a browser would read it in its own zone)
    expect(formatTime('2026-11-22 10:15')).toBe('2026-11-22T10:15:00Z');
    expect(formatTime('2026-11-22 00:05')).toBe('2026-11-22T00:05:00Z');
  });

  it('never shows a 12-hour clock or a locale form', () => {
    expect(formatTime('2026-11-22T22:15:03Z')).toBe('2026-11-22T22:15:03Z');
    expect(formatTime('2026-11-22 22:15')).not.toMatch(/AM|PM|\//);
  });

  it('shows nothing as a dash, and what it cannot read as it came (never a guess in a local zone)', () => {
    expect(formatTime(null)).toBe('—');
    expect(formatTime(undefined)).toBe('—');
    expect(formatTime('')).toBe('—');
    expect(formatTime('2026-11-22T10:15:03')).toBe('2026-11-22T10:15:03');
    expect(formatTime('soon')).toBe('soon');
  });
});
