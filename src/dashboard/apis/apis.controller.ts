import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Actor, DashboardActor, DashboardAuth } from '../../common/auth';
import { ApiListResponseDto } from './dto/api-list.dto';
import { ListApisQueryDto } from './dto/list-apis-query.dto';
import { ApisService } from './apis.service';

/** Dashboard view of the managed APIs (list and groups by category): Bearer access key, area `apis`. */
@ApiTags('dashboard: APIs')
@ApiUnauthorizedResponse({ description: 'missing, wrong or inactive access key' })
@ApiForbiddenResponse({ description: '`access denied: You do not have permission to access <path>`' })
@Controller('api/apis')
export class ApisController {
  constructor(private readonly service: ApisService) {}

  @Get()
  @DashboardAuth('apis', 'read')
  @ApiOperation({
    operationId: 'listApis',
    summary: 'List the organisation’s APIs (pages of DASHBOARD_PAGE_SIZE, newest first by default)',
  })
  @ApiOkResponse({ type: ApiListResponseDto })
  @ApiBadRequestResponse({ description: 'an unknown enum value, or p that is not a page number' })
  list(@Actor() actor: DashboardActor, @Query() query: ListApisQueryDto) {
    return this.service.list(actor, query);
  }

  @Get('groups')
  @DashboardAuth('apis', 'read')
  @ApiOperation({ operationId: 'listApiGroups', summary: 'API ids by category' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      example: { payments: ['a1', 'b2'] },
    },
  })
  groups(@Actor() actor: DashboardActor) {
    return this.service.groups(actor);
  }
}
