import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { API_TYPES, AUTH_TYPES } from '../../../gateway/apis/projection';
import { MAX_PAGE } from '../../page-query.dto';

export const API_SORTS = ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'] as const;
export type ApiSort = (typeof API_SORTS)[number];

const lower = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value);

/** GET /api/apis query (interface 4.5; decisions §3). Unknown enum values are a 400. */
export class ListApisQueryDto {
  @ApiPropertyOptional({ enum: ['1'], deprecated: true, description: 'accepted and ignored' })
  @IsOptional() @IsIn(['1'])
  compressed?: string;

  @ApiPropertyOptional({ enum: API_TYPES, description: 'every definition of this service is `rest`' })
  @IsOptional() @IsIn(API_TYPES)
  api_type?: string;

  @ApiPropertyOptional({ description: 'only APIs in this category (x-gateway-api-gateway.info.categories)' })
  @IsOptional() @MaxLength(256) @IsString()
  category?: string;

  @ApiPropertyOptional({ enum: AUTH_TYPES, description: 'only APIs with this authentication type' })
  @IsOptional() @IsIn(AUTH_TYPES)
  auth_type?: string;

  @ApiPropertyOptional({ enum: ['true', 'false', '1', '0'], description: 'true: leave out child versions of another API' })
  @IsOptional() @Transform(lower) @IsIn(['true', 'false', '1', '0'])
  base_apis?: string;

  @ApiPropertyOptional({ description: 'case-insensitive substring of the name' })
  @IsOptional() @MaxLength(256) @IsString()
  q?: string;

  @ApiPropertyOptional({ description: 'page number, 1-based', minimum: 1, maximum: MAX_PAGE, default: 1 })
  @IsOptional() @Type(() => Number) @IsInt({ message: 'p must be a whole page number' }) @Min(1, { message: 'p must be 1 or more' }) @Max(MAX_PAGE, { message: `p must be at most ${MAX_PAGE}` })
  p?: number;

  @ApiPropertyOptional({ enum: API_SORTS, default: '-created_at' })
  @IsOptional() @IsIn(API_SORTS)
  sort?: ApiSort;
}
