import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { GatewayAuth } from '../../common/auth';
import { AnalyticsIngestService } from './analytics-ingest.service';
import { MAX_LATENCY_MS } from './analytics-record';

class AnalyticsIngestRecordDto {
  @ApiProperty({
    format: 'date-time',
    description: 'RFC 3339 with seconds and an offset; in UTC from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
  })
  timestamp: string;
  @ApiProperty({ required: false }) org_id?: string;
  @ApiProperty() api_id: string;
  @ApiProperty({ required: false }) api_name?: string;
  @ApiProperty({ example: '/pets/{id}' }) path: string;
  @ApiProperty({ required: false, example: 'GET' }) method?: string;
  @ApiProperty({ minimum: 100, maximum: 599 }) code: number;
  @ApiProperty({ description: 'ms', minimum: 0, maximum: MAX_LATENCY_MS }) latency: number;
  @ApiProperty({ description: 'ms', minimum: 0, maximum: MAX_LATENCY_MS }) upstream_latency: number;
  @ApiProperty({ description: 'ms', minimum: 0, maximum: MAX_LATENCY_MS }) request_time: number;
  @ApiProperty({ required: false }) oauth_id?: string;
  @ApiProperty({ required: false }) key?: string;
  @ApiProperty({ required: false }) alias?: string;
  @ApiProperty({ required: false }) url?: string;
  @ApiProperty({ required: false, example: 'GB' }) iso_country?: string;
}

class IngestResponseDto {
  @ApiProperty({ example: 'ok' }) status: string;
  @ApiProperty({ description: 'records taken' }) ingested: number;
}

/**
 * Gateways push request records here, in batches taken or refused whole. The route takes bodies up to 32 MiB
 * (ROUTE_BODY_LIMITS).
 */
@ApiTags('gateway: analytics')
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
