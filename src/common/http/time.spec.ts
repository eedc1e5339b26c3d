import { notRfc3339Message, parseRfc3339 } from './time';

describe('parseRfc3339', () => {
  it.each([
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00.5Z', '2026-11-22T10:00:00.500Z'],
    ['2026-11-22T10:00:00.123456789Z', '2026-11-22T10:00:00.123Z'],
    ['2026-11-22T10:00:00+02:00', '2026-11-22T08:00:00.000Z'],
    ['2026-11-22T10:00:00-05:30', '2026-11-22T15:30:00.000Z'],
    ['2026-11-22T10:00:00-00:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T00:30:00+01:00', '2026-11-21T23:30:00.000Z'],
    // lower-case t and z, and a space for T, as RFC 3339 allows
    ['2026-11-22t10:00:00z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22 10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
    // a leap second, at the end of a month in UTC: the next day's first instant (as PostgreSQL reads it)
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2016-12-31T23:59:60.5Z', '2017-01-01T00:00:00.500Z'],
    ['2015-06-30T23:59:60Z', '2015-07-01T00:00:00.000Z'],
    ['2016-12-31T18:59:60-05:00', '2017-01-01T00:00:00.000Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['0099-06-15T12:00:00Z', '0099-06-15T12:00:00.000Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
  ])('reads %s as %s', (input, instant) => {
    expect(parseRfc3339(input)?.toISOString()).toBe(instant);
  });

  it.each([
    // what used to be read in the server's time zone
    ['a date without a time', '2026-11-22'],
    ['a time without an offset', '2026-11-22T10:00:00'],
    ['a time without an offset, with a fraction', '2026-11-22T10:00:00.000'],
    ['a time without seconds', '2026-11-22T10:00Z'],
    ['an offset without a colon', '2026-11-22T10:00:00+0200'],
    ['an offset in hours only', '2026-11-22T10:00:00+02'],
    ['an empty fraction', '2026-11-22T10:00:00.Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['month 00', '2026-00-10T00:00:00Z'],
    ['day 00', '2026-11-00T00:00:00Z'],
    ['30 February', '2026-02-30T00:00:00Z'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['hour 24', '2026-11-22T24:00:00Z'],
    ['minute 60', '2026-11-22T10:60:00Z'],
    ['second 61', '2026-11-22T10:00:61Z'],
    ['a leap second not at the end of a UTC day', '2016-12-31T10:59:60Z'],
    ['a leap second at the end of a day that does not end a month', '2016-12-30T23:59:60Z'],
    ['a leap second at local 23:59 that is not 23:59 UTC', '2016-12-31T23:59:60+01:00'],
    ['offset hour 24', '2026-11-22T10:00:00+24:00'],
    ['offset minute 60', '2026-11-22T10:00:00+01:60'],
    ['another separator', '2026-11-22_10:00:00Z'],
    ['a two-digit year', '26-11-22T10:00:00Z'],
    ['a five-digit year', '+02026-11-22T10:00:00Z'],
    ['an ISO 8601 week date', '2026-W47-7T10:00:00Z'],
    ['an ordinal date', '2026-326T10:00:00Z'],
    ['basic format', '20261122T100000Z'],
    ['surrounding space', ' 2026-11-22T10:00:00Z'],
    ['a trailing newline', '2026-11-22T10:00:00Z\n'],
    ['a zone name', '2026-11-22T10:00:00 UTC'],
    ['digits that are not ASCII', '２０２６-11-22T10:00:00Z'],
    ['words', 'yesterday'],
    ['epoch seconds', '1700000000'],
    ['the empty string', ''],
  ])('refuses %s (%j)', (_what, input) => {
    expect(parseRfc3339(input)).toBeUndefined();
  });

  it('refuses what is not a string', () => {
    for (const v of [undefined, null, 1700000000, new Date(), ['2026-11-22T10:00:00Z'], { since: 'x' }])
      expect(parseRfc3339(v)).toBeUndefined();
  });

  it('says what it wants, naming the field', () => {
    expect(notRfc3339Message('since')).toBe(
      'since must be an RFC 3339 date-time with seconds and a time zone, e.g. 2026-11-22T10:00:00Z',
    );
  });
});
