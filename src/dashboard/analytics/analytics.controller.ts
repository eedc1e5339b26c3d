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
import { DAY_OR_MONTH, YEAR } from './date-range';
import { AnalyticsPageDto } from './dto/analytics.dto';

const DATE_SEGMENT = {
  description: 'decimal, with or without leading zero',
  schema: { type: 'string', pattern: DAY_OR_MONTH.source },
};
const YEAR_SEGMENT = { description: 'four digits', schema: { type: 'string', pattern: YEAR.source } };

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
  @ApiParam({ name: 'oauthId', type: String, description: 'OAuthClientID' })
  @ApiParam({ name: 'startDay', ...DATE_SEGMENT })
  @ApiParam({ name: 'startMonth', ...DATE_SEGMENT })
  @ApiParam({ name: 'startYear', ...YEAR_SEGMENT })
  @ApiParam({ name: 'endDay', ...DATE_SEGMENT })
  @ApiParam({ name: 'endMonth', ...DATE_SEGMENT })
  @ApiParam({ name: 'endYear', ...YEAR_SEGMENT })
  @ApiOkResponse({ type: AnalyticsPageDto })
  @ApiBadRequestResponse({ description: 'an impossible date, a start after the end, or p that is not a page number' })
  byOAuthClient(@Actor() actor: DashboardActor, @Param() params: ActivityParams, @Query() query: PageQueryDto) {
    return this.service.byOAuthClient(actor, params, query.p);
  }
}
