import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { GatewayAuth } from '../../common/auth';
import { AnalyticsIngestService } from './analytics-ingest.service';
import { MAX_LATENCY_MS, MAX_STATUS, MIN_STATUS, STRING_FIELDS } from './analytics-record';

/** A text field as parseAnalyticsBatch takes it: required ones not empty, each at most its length; null is absent. */
const TextField = (name: (typeof STRING_FIELDS)[number]['name'], extra: { example?: string } = {}) => {
  const field = STRING_FIELDS.find((f) => f.name === name)!;
  return ApiProperty({
    required: field.required,
    ...(field.required ? { minLength: 1 } : { nullable: true }),
    maxLength: field.max,
    ...extra,
  });
};

class AnalyticsIngestRecordDto {
  @ApiProperty({
    format: 'date-time',
    description: 'RFC 3339 with seconds and an offset; in UTC from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
  })
  timestamp: string;
  @TextField('org_id') org_id?: string;
  @TextField('api_id') api_id: string;
  @TextField('api_name') api_name?: string;
  @TextField('path', { example: '/pets/{id}' }) path: string;
  @TextField('method', { example: 'GET' }) method?: string;
  @ApiProperty({ type: 'integer', minimum: MIN_STATUS, maximum: MAX_STATUS }) code: number;
  @ApiProperty({ description: 'ms', minimum: 0, maximum: MAX_LATENCY_MS }) latency: number;
  @ApiProperty({ description: 'ms', minimum: 0, maximum: MAX_LATENCY_MS }) upstream_latency: number;
  @ApiProperty({ description: 'ms', minimum: 0, maximum: MAX_LATENCY_MS }) request_time: number;
  @TextField('oauth_id') oauth_id?: string;
  @TextField('key') key?: string;
  @TextField('alias') alias?: string;
  @TextField('url') url?: string;
  @TextField('iso_country', { example: 'GB' }) iso_country?: string;
}

class IngestResponseDto {
  @ApiProperty({ example: 'ok' }) status: string;
  @ApiProperty({ type: 'integer', description: 'records taken' }) ingested: number;
}

/**
 * Gateways push request records here, in batches taken or refused whole. The route takes bodies up to 32 MiB
 * (ROUTE_BODY_LIMITS).
 */
@ApiTags('gateway: analytics')
// the gateway family takes JSON sent as text/plain too (the input policy)
@ApiConsumes('application/json', 'text/plain')
@GatewayAuth()
@Controller('gateway/analytics')
export class AnalyticsIngestController {
  constructor(private readonly service: AnalyticsIngestService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'ingestAnalytics',
    summary: 'Ingest a batch of request records (a JSON array; all or nothing)',
  })
  @ApiBody({ type: AnalyticsIngestRecordDto, isArray: true })
  @ApiOkResponse({ type: IngestResponseDto })
  @ApiBadRequestResponse({ description: 'not an array, or a record fails validation (reasons name the record index)' })
  @ApiPayloadTooLargeResponse({ description: 'body over 32 MiB' })
  ingest(@Body() body: unknown) {
    return this.service.ingest(body);
  }
}
