import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { ToPageNumber } from './page-number';

/** Highest page number taken: beyond it a list is empty anyway, and offsets stay plain integers. */
export const MAX_PORTAL_PAGE = 1_000_000;

/** Portal list paging: `page` 1-based, `per_page` default 20, at most 100; both in plain decimal digits. */
export class PortalPageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PORTAL_PAGE, default: 1 })
  @IsOptional()
  @ToPageNumber()
  @IsInt()
  @Min(1)
  @Max(MAX_PORTAL_PAGE)
  page?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @ToPageNumber()
  @IsInt()
  @Min(1)
  @Max(100)
  per_page?: number;
}

export function portalPaging(q: PortalPageQuery): { skip: number; take: number } {
  const take = q.per_page ?? 20;
  const page = q.page ?? 1;
  return { skip: (page - 1) * take, take };
}
