import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, ValidateBy } from 'class-validator';
import { MaxLength } from '../../../common/http/max-length.decorator';
import { API_TYPES, AUTH_TYPES } from '../../../gateway/apis/projection';
import { ToPageNumber } from '../../../common/http/page-number';
import { bmpCharacterClass } from '../../../common/http/pattern';
import { notAPageNumber } from '../../page-query.dto';
import { commaList } from '../api-list.query';

export const API_SORTS = ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'] as const;
export type ApiSort = (typeof API_SORTS)[number];

const lower = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value);

/** A comma-separated list whose every item is one of `values` (an empty list too: it filters nothing). */
const IsCommaListOf = (values: readonly string[]) =>
  ValidateBy({
    name: 'isCommaListOf',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && commaList(value).every((v) => values.includes(v)),
      defaultMessage: (args) => `${args?.property} must be a comma-separated list of: ${values.join(', ')}`,
    },
  });

/**
 * IsCommaListOf(values) as an OpenAPI pattern: items separated by commas, each empty or one of `values`, with
 * whitespace (as trim() removes it) around it.
 */
function commaListPattern(values: readonly string[]): string {
  const blank = `[${bmpCharacterClass(/\s/)}]*`;
  const item = `${blank}(?:(?:${values.join('|')})${blank})?`;
  return `^${item}(?:,${item})*$`;
}

/** `base_apis` present with any value but false/0 (an empty value included) asks for base APIs only. */
export function baseApisOnly(value: string | undefined): boolean {
  return value !== undefined && value !== 'false' && value !== '0';
}

/** GET /api/apis query. Unknown enum values are a 400. */
export class ListApisQueryDto {
  @ApiPropertyOptional({ enum: ['1', ''], deprecated: true, description: 'accepted (also empty) and ignored' })
  @IsOptional()
  // (the default message lists the allowed values, and an empty one reads as a trailing comma: `1, `)
  @IsIn(['1', ''], { message: 'compressed must be 1 or empty' })
  compressed?: string;

  @ApiPropertyOptional({ enum: API_TYPES, description: 'every definition of this service is `rest`' })
  @IsOptional()
  @IsIn(API_TYPES)
  api_type?: string;

  @ApiPropertyOptional({
    description: 'comma-separated categories (x-gateway-api-gateway.info.categories): only APIs in any of them',
    example: 'payments,public',
  })
  @IsOptional()
  @MaxLength(2048)
  @IsString()
  category?: string;

  @ApiPropertyOptional({
    description: `comma-separated authentication types, each one of ${AUTH_TYPES.join(', ')}: only APIs with any of them`,
    example: 'keyless,authToken',
    pattern: commaListPattern(AUTH_TYPES),
  })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  @IsCommaListOf(AUTH_TYPES)
  auth_type?: string;

  @ApiPropertyOptional({
    description:
      'present with any value but `false` or `0` (an empty value included): leave out child versions of another API',
    example: 'true',
  })
  @IsOptional()
  @Transform(lower)
  @IsString()
  @MaxLength(256)
  base_apis?: string;

  @ApiPropertyOptional({ description: 'case-insensitive substring of the name' })
  @IsOptional()
  @MaxLength(256)
  @IsString()
  q?: string;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      'page number, 1-based, in plain decimal digits; a page past the end is empty; 0 or a negative number returns every matching API in one answer (`pages` unchanged)',
    default: 1,
  })
  @IsOptional()
  @ToPageNumber()
  @IsInt({ message: notAPageNumber(', or 0 or less for every API') })
  p?: number;

  @ApiPropertyOptional({ enum: API_SORTS, default: '-created_at' })
  @IsOptional()
  @IsIn(API_SORTS)
  sort?: ApiSort;
}
