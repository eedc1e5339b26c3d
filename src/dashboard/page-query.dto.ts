import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Min } from 'class-validator';

/** `p`: the 1-based page of a dashboard list. */
export class PageQueryDto {
  @ApiPropertyOptional({ description: 'page number, 1-based', minimum: 1, default: 1 })
  @IsOptional() @Type(() => Number) @IsInt({ message: 'p must be a whole page number' }) @Min(1, { message: 'p must be 1 or more' })
  p?: number;
}
