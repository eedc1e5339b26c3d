import { Transform } from 'class-transformer';

// Plain decimal digits, a `-` before a negative page: no `+`, leading zeros, spaces, fraction or exponent, which
// Number() would all read (Number('1e2') is 100, Number(' 01') is 1).
const PAGE_NUMBER = /^(0|-?[1-9][0-9]*)$/;

/**
 * Reads a page number (or page size) from the query: plain decimal digits only. One beyond the largest safe integer
 * is read as that integer (no list reaches it, so it is past the end like any other, or over the route's maximum).
 * Anything else is left as sent, for the route's validators to refuse.
 */
export const ToPageNumber = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && PAGE_NUMBER.test(value)
      ? Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(value)))
      : value,
  );
