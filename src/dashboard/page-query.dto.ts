import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, ValidateBy } from 'class-validator';

// Plain decimal digits, a `-` before a negative page: no `+`, leading zeros, spaces, fraction or exponent, which
// Number() would all read (Number('1e2') is 100, Number(' 01') is 1).
const PAGE_NUMBER = /^(0|-?[1-9][0-9]*)$/;

/**
 * Reads the page number `p` of a dashboard list from the query. A page beyond the largest safe integer is read as that
 * page: no list reaches it, so it is past the end like any other (and a negative one still means every item where the
 * route allows that). Anything but plain decimal digits is left as sent, for the route's validators to refuse.
 */
export const ToPageNumber = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && PAGE_NUMBER.test(value)
      ? Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Number(value)))
      : value,
  );

/** What a `p` that is not plain decimal digits is told; `more` names the values beyond 1, 2, ... the route takes. */
export const notAPageNumber = (more = '') => `p must be a whole page number in plain decimal digits (1, 2, ...${more})`;

/** 1 or more, once `p` is a number: IsInt alone tells of anything else, so a reason is given once. */
const IsFirstPageOrLater = () =>
  ValidateBy({
    name: 'isFirstPageOrLater',
    validator: {
      validate: (value: unknown) => typeof value !== 'number' || value >= 1,
      defaultMessage: () => 'p must be 1 or more',
    },
  });

/** `p`: the 1-based page of a dashboard list. */
export class PageQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    description: 'page number, 1-based, in plain decimal digits; a page past the end is empty',
    minimum: 1,
    default: 1,
  })
  @IsOptional()
  @ToPageNumber()
  @IsInt({ message: notAPageNumber() })
  @IsFirstPageOrLater()
  p?: number;
}
