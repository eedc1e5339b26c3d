import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { TARGET_STATUSES, TargetStatus } from '../access-request-state';

/** Body of PATCH /portal-api/access_requests/{access_request_id}. */
export class UpdateAccessRequestStatusDto {
  @ApiProperty({ enum: TARGET_STATUSES, example: 'approved' })
  @IsIn(TARGET_STATUSES)
  Status: TargetStatus;
}
