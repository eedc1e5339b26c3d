import { ApiProperty } from '@nestjs/swagger';

class AnalyticsIdDto {
  @ApiProperty({ type: 'integer', description: '0 in per-path rows' }) day: number;
  @ApiProperty({ type: 'integer', description: '0 in per-path rows' }) month: number;
  @ApiProperty({ type: 'integer', description: '0 in per-path rows' }) year: number;
  @ApiProperty({ type: 'integer', description: '0 in per-path rows' }) hour: number;
  @ApiProperty({ type: 'integer', description: '0 in per-path rows' }) code: number;
  @ApiProperty() api_id: string;
  @ApiProperty() api_name: string;
  @ApiProperty() path: string;
  @ApiProperty({ description: 'of the most recent hit' }) url: string;
  @ApiProperty({ description: 'of the most recent hit' }) key: string;
  @ApiProperty({ description: 'of the most recent hit' }) alias: string;
  @ApiProperty({ description: 'of the most recent hit' }) iso_country: string;
}

/** Analytics record: one row per (api_id, path); latencies in ms. */
export class AnalyticsRecordDto {
  @ApiProperty({ type: AnalyticsIdDto }) id: AnalyticsIdDto;
  @ApiProperty({ type: 'integer' }) hits: number;
  @ApiProperty({ type: 'integer', description: 'hits with a status code below 400' }) success: number;
  @ApiProperty({ type: 'integer', description: 'hits with a status code of 400 or more' }) error: number;
  @ApiProperty({ format: 'date-time' }) last_hit: string;
  @ApiProperty({ description: 'average' }) latency: number;
  @ApiProperty() max_latency: number;
  @ApiProperty() min_latency: number;
  @ApiProperty({ description: 'average' }) upstream_latency: number;
  @ApiProperty() max_upstream_latency: number;
  @ApiProperty() min_upstream_latency: number;
  @ApiProperty({ description: 'average' }) request_time: number;
  @ApiProperty() max_request_time: number;
  @ApiProperty() min_request_time: number;
}

export class AnalyticsPageDto {
  @ApiProperty({ type: AnalyticsRecordDto, isArray: true }) data: AnalyticsRecordDto[];
  @ApiProperty({ type: 'integer', description: 'ceil(rows / 10); 0 when there are none' }) pages: number;
}
