import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { IsRfc3339 } from '../../common/http/is-rfc3339.decorator';
import { ATTEMPT_ERRORS } from '../attempt-outcome';

export class StatsQuery {
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'RFC 3339 date-time with seconds and a time zone (`Z` or ±hh:mm): start of the window (default: 24 hours ago)',
    example: '2026-11-22T00:00:00Z',
  })
  @IsOptional()
  @IsRfc3339()
  since?: string;
}

export class LastFailureResponse {
  @ApiProperty({ format: 'date-time' }) At: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when there was no HTTP answer' }) StatusCode:
    number | null;
  @ApiProperty({ enum: ATTEMPT_ERRORS }) Error: string;
  @ApiProperty({ description: "first 4 KiB of the response body, or a broker's reason" }) ResponseBody: string;
}

export class WebhookStatsResponse {
  @ApiProperty({ format: 'uuid' }) WebhookID: string;
  @ApiProperty({ format: 'date-time', description: 'start of the window' }) Since: string;
  @ApiProperty({ format: 'date-time', description: 'end of the window: the time of the answer' }) Until: string;
  @ApiProperty({ type: 'integer', description: 'deliveries created in the window that were delivered' })
  Delivered: number;
  @ApiProperty({ type: 'integer', description: 'deliveries created in the window that failed for good' })
  Failed: number;
  @ApiProperty({ type: 'integer', description: 'deliveries created in the window not attempted yet' }) Pending: number;
  @ApiProperty({
    type: 'integer',
    description: 'deliveries created in the window waiting for a retry after a failed attempt',
  })
  Retrying: number;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Delivered / (Delivered + Failed), 0 to 1; null when none has finished',
  })
  SuccessRate: number | null;
  @ApiProperty({ type: 'integer', description: 'attempts started in the window' }) Attempts: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'median attempt duration in the window (ms, rounded); null without attempts',
  })
  LatencyP50Ms: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: '95th percentile attempt duration in the window (ms, rounded); null without attempts',
  })
  LatencyP95Ms: number | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'last 2xx attempt ever; null if none',
  })
  LastSuccessAt: string | null;
  @ApiProperty({ type: LastFailureResponse, nullable: true, description: 'last failed attempt ever; null if none' })
  LastFailure: LastFailureResponse | null;
}
