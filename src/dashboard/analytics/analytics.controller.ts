import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Actor, DashboardActor, DashboardAuth } from '../../common/auth';
import { PageQueryDto } from '../page-query.dto';
import { ActivityParams, AnalyticsService } from './analytics.service';
import { AnalyticsPageDto } from './dto/analytics.dto';

const DATE_SEGMENT = 'decimal, with or without leading zero';

/** Request analytics of an OAuth client: Bearer access key, area `analytics`. */
@ApiTags('dashboard: analytics')
@ApiUnauthorizedResponse({ description: 'missing, wrong or inactive access key' })
@ApiForbiddenResponse({ description: '`access denied: You do not have permission to access <path>`' })
@Controller('api/activity')
export class AnalyticsController {
  constructor(private readonly service: AnalyticsService) {}

  @Get('oauthid/:oauthId/:startDay/:startMonth/:startYear/:endDay/:endMonth/:endYear')
  @DashboardAuth('analytics', 'read')
  @ApiOperation({
    operationId: 'getOAuthClientAnalytics',
    summary:
      'Analytics of an OAuth client from the start day 00:00 UTC to the end of the end day, one row per API path, 10 rows a page',
  })
  @ApiParam({ name: 'oauthId', description: 'OAuthClientID' })
  @ApiParam({ name: 'startDay', description: DATE_SEGMENT })
  @ApiParam({ name: 'startMonth', description: DATE_SEGMENT })
  @ApiParam({ name: 'startYear', description: 'four digits' })
  @ApiParam({ name: 'endDay', description: DATE_SEGMENT })
  @ApiParam({ name: 'endMonth', description: DATE_SEGMENT })
  @ApiParam({ name: 'endYear', description: 'four digits' })
  @ApiOkResponse({ type: AnalyticsPageDto })
  @ApiBadRequestResponse({ description: 'an impossible date, a start after the end, or p that is not a page number' })
  byOAuthClient(@Actor() actor: DashboardActor, @Param() params: ActivityParams, @Query() query: PageQueryDto) {
    return this.service.byOAuthClient(actor, params, query.p);
  }
}
