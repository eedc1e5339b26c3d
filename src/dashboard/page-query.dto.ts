import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** Highest page number taken: beyond it a list is empty anyway, and offsets stay plain integers. */
export const MAX_PAGE = 1_000_000;

/** `p`: the 1-based page of a dashboard list. */
export class PageQueryDto {
  @ApiPropertyOptional({ description: 'page number, 1-based', minimum: 1, maximum: MAX_PAGE, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'p must be a whole page number' })
  @Min(1, { message: 'p must be 1 or more' })
  @Max(MAX_PAGE, { message: `p must be at most ${MAX_PAGE}` })
  p?: number;
}
