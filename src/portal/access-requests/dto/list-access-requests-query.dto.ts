import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PortalPageQuery } from '../../../common/http/pagination';
import { ACCESS_REQUEST_STATUSES, AccessRequestStatus } from '../access-request-state';

/** Query of GET /portal-api/access_requests: paging plus a status filter. */
export class ListAccessRequestsQuery extends PortalPageQuery {
  @ApiPropertyOptional({ enum: ACCESS_REQUEST_STATUSES })
  @IsOptional()
  @IsIn(ACCESS_REQUEST_STATUSES)
  status?: AccessRequestStatus;
}
