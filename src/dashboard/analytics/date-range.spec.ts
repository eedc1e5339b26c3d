import { parseDay, parseDayRange } from './date-range';

describe('analytics dates', () => {
  it.each([
    ['1', '2', '2024', '2024-02-01'],
    ['01', '02', '2024', '2024-02-01'],
    ['29', '2', '2024', '2024-02-29'],
    ['31', '12', '1999', '1999-12-31'],
    ['1', '1', '0099', '0099-01-01'],
  ])('%s/%s/%s is %s', (d, m, y, iso) => expect(parseDay(d, m, y)?.toISOString().slice(0, 10)).toBe(iso));

  it.each([
    ['29', '2', '2023'],
    ['31', '4', '2024'],
    ['0', '1', '2024'],
    ['1', '13', '2024'],
    ['1', '0', '2024'],
    ['32', '1', '2024'],
    ['1', '1', '24'],
    ['1', '1', '0000'],
    ['a', '1', '2024'],
    ['1.5', '1', '2024'],
    ['-1', '1', '2024'],
    ['001', '1', '2024'],
    ['', '1', '2024'],
  ])('%s/%s/%s is impossible', (d, m, y) => expect(parseDay(d, m, y)).toBeUndefined());

  it('covers the start day from 00:00 UTC to the end of the end day', () => {
    expect(parseDayRange(['1', '3', '2024'], ['3', '3', '2024'])).toEqual({
      from: new Date('2024-03-01T00:00:00Z'),
      to: new Date('2024-03-04T00:00:00Z'),
    });
    expect(parseDayRange(['5', '5', '2024'], ['5', '5', '2024'])).toEqual({
      from: new Date('2024-05-05T00:00:00Z'),
      to: new Date('2024-05-06T00:00:00Z'),
    });
  });

  it('refuses impossible dates and a start after the end', () => {
    expect(parseDayRange(['30', '2', '2024'], ['31', '2', '2024'])).toEqual({
      errors: [
        'start date 30/2/2024 is not a date (day/month/year)',
        'end date 31/2/2024 is not a date (day/month/year)',
      ],
    });
    expect(parseDayRange(['2', '1', '2024'], ['1', '1', '2024'])).toEqual({
      errors: ['the start date is after the end date'],
    });
  });
});
