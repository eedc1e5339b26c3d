import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidateBy } from 'class-validator';
import { ToPageNumber } from './page-number';

/** Highest page number taken: beyond it a list is empty anyway, and offsets stay plain integers. */
export const MAX_PORTAL_PAGE = 1_000_000;
const MAX_PER_PAGE = 100;

/** A whole number from 1 to `max` (once read by ToPageNumber): one reason, whatever was sent instead. */
const WholeNumberUpTo = (max: number) =>
  ValidateBy({
    name: 'wholeNumberUpTo',
    validator: {
      validate: (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max,
      defaultMessage: (args) => `${args?.property} must be a whole number from 1 to ${max}, in plain decimal digits`,
    },
  });

/** Portal list paging: `page` 1-based, `per_page` default 20, at most 100, `limit`; all in plain decimal digits. */
export class PortalPageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PORTAL_PAGE, default: 1 })
  @IsOptional()
  @ToPageNumber()
  @WholeNumberUpTo(MAX_PORTAL_PAGE)
  page?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: 20 })
  @IsOptional()
  @ToPageNumber()
  @WholeNumberUpTo(MAX_PER_PAGE)
  per_page?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PER_PAGE,
    description: 'at most this many records (default per_page); the page still starts at (page - 1) × per_page',
  })
  @IsOptional()
  @ToPageNumber()
  @WholeNumberUpTo(MAX_PER_PAGE)
  limit?: number;
}

/** `limit` caps the rows only: the offset stays a multiple of `per_page`, as the portal pages its lists. */
export function portalPaging(q: PortalPageQuery): { skip: number; take: number } {
  const perPage = q.per_page ?? 20;
  const page = q.page ?? 1;
  return { skip: (page - 1) * perPage, take: q.limit ?? perPage };
}
