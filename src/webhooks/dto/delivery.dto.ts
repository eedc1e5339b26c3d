import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { IsRfc3339 } from '../../common/http/is-rfc3339.decorator';
import { PortalPageQuery } from '../../common/http/pagination';
import { ATTEMPT_ERRORS } from '../attempt-outcome';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export class DeliveryListQuery extends PortalPageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES, { message: `status must be one of ${DELIVERY_STATUSES.join(', ')}` })
  status?: string;
}

export class RecoverDto {
  @ApiProperty({
    format: 'date-time',
    description:
      'RFC 3339 date-time with seconds and a time zone (`Z` or ±hh:mm): failed deliveries created since then are queued again',
    example: '2026-11-22T00:00:00Z',
  })
  @IsRfc3339()
  since: string;
}

export class DeliveryResponse {
  @ApiProperty({ format: 'uuid', description: 'also the webhook-id header of every attempt' }) ID: string;
  @ApiProperty({ format: 'uuid' }) WebhookID: string;
  @ApiProperty({ format: 'uuid' }) EventID: string;
  @ApiProperty({ example: 'AccessRequestApproved' }) Event: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) Status: string;
  @ApiProperty({ type: 'integer' }) AttemptCount: number;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) NextAttemptAt: string | null;
  @ApiProperty({ format: 'date-time' }) CreatedAt: string;
  @ApiProperty({ format: 'date-time' }) UpdatedAt: string;
}

export class AttemptResponse {
  @ApiProperty({ type: 'integer' }) Number: number;
  @ApiProperty({ format: 'date-time' }) StartedAt: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'the HTTP status of the answer; null without one (no answer, or a broker destination)',
  })
  StatusCode: number | null;
  @ApiProperty({ type: 'integer' }) DurationMs: number;
  @ApiProperty({
    type: String,
    nullable: true,
    enum: ATTEMPT_ERRORS,
    description:
      'why it failed (null: delivered): timeout, connection, blocked_address, http_status (a non-2xx answer); for a broker also unroutable (no queue or stream took the message); rejected: the broker refused it, or for HTTP the request was refused before it was sent (a stored header HTTP cannot carry, named in ResponseBody)',
  })
  Error: string | null;
  @ApiProperty({
    description:
      "first 4 KiB of the response body (of one cut short by the timeout or a dropped connection, what came until then); for a broker, its answer (the confirmation, the stream's acknowledgement) or why the message was not taken",
  })
  ResponseBody: string;
  @ApiProperty({ enum: ['scheduled', 'manual'] }) Trigger: string;
}

export class DeliveryWithAttemptsResponse extends DeliveryResponse {
  @ApiProperty({ type: [AttemptResponse] }) Attempts: AttemptResponse[];
}

export class RecoverResponse {
  @ApiProperty({ type: 'integer', description: 'failed deliveries queued again' }) Requeued: number;
}
