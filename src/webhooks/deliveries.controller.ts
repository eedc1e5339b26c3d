import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { PortalAuth } from '../common/auth';
import { PortalErrorBody } from '../common/errors/error-bodies';
import { DeliveriesService } from './deliveries.service';
import { WebhookStatsService } from './webhook-stats.service';
import { StatsQuery, WebhookStatsResponse } from './dto/stats.dto';
import {
  DeliveryListQuery,
  DeliveryResponse,
  DeliveryWithAttemptsResponse,
  RecoverDto,
  RecoverResponse,
} from './dto/delivery.dto';

@ApiTags('portal webhooks')
@PortalAuth()
@ApiUnauthorizedResponse({ type: PortalErrorBody, description: 'missing or wrong portal API token' })
@ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such webhook or delivery' })
@Controller('portal-api/webhooks/:id')
export class DeliveriesController {
  constructor(
    private readonly service: DeliveriesService,
    private readonly health: WebhookStatsService,
  ) {}

  @Get('stats')
  @ApiOperation({
    summary: 'Health of a webhook',
    description:
      'Deliveries created since `since` by status, success rate and attempt latency in that window; the last success and the last failure ever.',
    operationId: 'getWebhookStats',
  })
  @ApiOkResponse({ type: WebhookStatsResponse })
  @ApiUnprocessableEntityResponse({ type: PortalErrorBody, description: 'since is not an RFC 3339 date-time' })
  stats(@Param('id') id: string, @Query() q: StatsQuery) {
    return this.health.stats(id, q.since);
  }

  @Get('deliveries')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: 'Delivery log of a webhook, newest first' })
  @ApiOkResponse({ type: [DeliveryResponse], description: 'newest first' })
  list(@Param('id') id: string, @Query() q: DeliveryListQuery) {
    return this.service.list(id, q);
  }

  @Get('deliveries/:deliveryId')
  @ApiOperation({ operationId: 'getWebhookDelivery', summary: 'One delivery with every attempt' })
  @ApiOkResponse({ type: DeliveryWithAttemptsResponse })
  get(@Param('id') id: string, @Param('deliveryId') deliveryId: string) {
    return this.service.get(id, deliveryId);
  }

  @Post('deliveries/:deliveryId/redeliver')
  @ApiOperation({ operationId: 'redeliverWebhookDelivery', summary: 'Attempt a delivery once more, now' })
  @HttpCode(200)
  @ApiOkResponse({ type: DeliveryResponse })
  @ApiConflictResponse({
    type: PortalErrorBody,
    description: 'the delivery is still pending, or the webhook is inactive',
  })
  redeliver(@Param('id') id: string, @Param('deliveryId') deliveryId: string) {
    return this.service.redeliver(id, deliveryId);
  }

  @Post('recover')
  @ApiOperation({
    operationId: 'recoverWebhookDeliveries',
    summary: 'Re-queue every failed delivery created since a time',
  })
  @HttpCode(200)
  @ApiOkResponse({ type: RecoverResponse })
  @ApiConflictResponse({ type: PortalErrorBody, description: 'the webhook is inactive' })
  recover(@Param('id') id: string, @Body() dto: RecoverDto) {
    return this.service.recover(id, dto.since);
  }
}
