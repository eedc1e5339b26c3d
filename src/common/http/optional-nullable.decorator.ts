import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';

/**
 * An optional body member for which an explicit null is taken as absent (its default applies): @IsOptional(), and
 * documented as nullable, so that the OpenAPI document admits what the service takes. (@IsOptionalNotNull() is the
 * other kind: null refused.)
 */
export const OptionalNullable = (options: ApiPropertyOptions = {}) =>
  applyDecorators(ApiPropertyOptional({ ...options, nullable: true }), IsOptional());
