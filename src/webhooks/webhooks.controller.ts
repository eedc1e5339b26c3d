import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { PortalAuth } from '../common/auth';
import { PortalDeleteResponse } from '../portal/delete-response.dto';
import { PortalErrorBody } from '../common/errors/error-bodies';
import { PortalPageQuery } from '../common/http/pagination';
import { ApiEventCallbacks, WebhookTestEvent } from '../events/event-messages';
import {
  CreatedWebhookResponse,
  CreateWebhookDto,
  SavedWebhookResponse,
  RotateSecretDto,
  UpdateWebhookDto,
  WebhookHeaderInput,
  WebhookHeaderShowResponse,
  WebhookResponse,
  WebhookSecretResponse,
  WebhookTestDto,
  WebhookTestResponse,
  FilterTestDto,
  FilterTestResponse,
} from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';
import { HEADER_LIMITS } from './send/header-fields';

/** The 404 of the routes that name a webhook (and a header of it); a create or a list has nothing to miss. */
const WebhookNotFound = () => ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such webhook' });
const HeaderNotFound = () => ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such webhook or header' });

const OVER_HEADER_LIMITS = `the webhook would have more than ${HEADER_LIMITS.count} headers or more than ${HEADER_LIMITS.total} characters of header names and values together`;

@ApiTags('portal webhooks')
@PortalAuth()
@ApiUnauthorizedResponse({ type: PortalErrorBody, description: 'missing or wrong portal API token' })
@Controller('portal-api/webhooks')
export class WebhooksController {
  constructor(private readonly service: WebhooksService) {}

  @Post()
  @ApiOperation({ operationId: 'createWebhook', summary: 'Register a webhook (the answer carries its signing Secret)' })
  @ApiCreatedResponse({ type: CreatedWebhookResponse })
  @ApiEventCallbacks()
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: 'validation failed; errors lists every reason',
  })
  create(@Body() dto: CreateWebhookDto) {
    return this.service.create(dto);
  }

  @Post('filters/test')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'testWebhookFilter',
    summary: 'Whether a filter accepts a sample event (as fan-out would read it); nothing is saved or sent',
  })
  @ApiOkResponse({ type: FilterTestResponse })
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: 'the filter or the event is not valid: errors names the wrong part',
  })
  testFilter(@Body() dto: FilterTestDto) {
    return this.service.testFilter(dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'List webhooks' })
  @ApiOkResponse({ type: [WebhookResponse] })
  list(@Query() q: PortalPageQuery) {
    return this.service.list(q);
  }

  @Get(':id')
  @WebhookNotFound()
  @ApiOperation({ operationId: 'getWebhook', summary: 'Get a webhook' })
  @ApiOkResponse({ type: WebhookResponse })
  get(@Param('id') id: string) {
    return this.service.get(id);
  }

  @Put(':id')
  @WebhookNotFound()
  @ApiOperation({ operationId: 'updateWebhook', summary: 'Update a webhook (fields given replace stored ones)' })
  @ApiOkResponse({ type: SavedWebhookResponse })
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: `validation failed; errors lists every reason (Headers, which replaces all headers, is refused if with it ${OVER_HEADER_LIMITS})`,
  })
  update(@Param('id') id: string, @Body() dto: UpdateWebhookDto) {
    return this.service.update(id, dto);
  }

  @Delete(':id')
  @WebhookNotFound()
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    description:
      'At once: from this answer on, no route finds the webhook and nothing more is sent to it. Its delivery ' +
      'history (deliveries and attempts) is removed afterwards by the workers, in batches.',
  })
  @ApiOkResponse({ type: PortalDeleteResponse })
  remove(@Param('id') id: string) {
    return this.service.remove(id);
  }

  @Get(':id/secret')
  @WebhookNotFound()
  @ApiOperation({
    operationId: 'getWebhookSecret',
    summary: 'The key receivers verify with, and when a rotated-out key stops being used',
  })
  @ApiOkResponse({ type: WebhookSecretResponse })
  secret(@Param('id') id: string) {
    return this.service.secret(id);
  }

  @Post(':id/secret/rotate')
  @WebhookNotFound()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing key; deliveries carry signatures by the old and the new key during the grace period',
  })
  @ApiBody({ type: RotateSecretDto, required: false })
  @ApiOkResponse({ type: WebhookSecretResponse, description: 'the new key' })
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: 'GracePeriodSeconds is not an integer from 0 to 604800',
  })
  rotateSecret(@Param('id') id: string, @Body() dto: RotateSecretDto) {
    return this.service.rotateSecret(id, dto);
  }

  @Post(':id/test')
  @WebhookNotFound()
  @HttpCode(202)
  @ApiOperation({
    operationId: 'sendWebhookTest',
    summary: 'Queue one signed WebhookTest delivery to this webhook alone',
  })
  @ApiBody({ type: WebhookTestDto, required: false })
  @ApiExtraModels(WebhookTestEvent)
  @ApiAcceptedResponse({
    type: WebhookTestResponse,
    description:
      'the delivery is queued and already in the delivery log; the webhook receives a WebhookTestEvent body, signed, and retried like any delivery',
  })
  @ApiConflictResponse({
    type: PortalErrorBody,
    description: 'the webhook is inactive (inactive webhooks get no deliveries)',
  })
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: 'Note is not a string of at most 1024 characters',
  })
  sendTest(@Param('id') id: string, @Body() dto: WebhookTestDto) {
    return this.service.sendTest(id, dto);
  }

  @Get(':id/headers')
  @WebhookNotFound()
  @ApiOperation({ operationId: 'listWebhookHeaders', summary: 'List the headers sent with every delivery' })
  @ApiOkResponse({ type: [WebhookHeaderShowResponse] })
  listHeaders(@Param('id') id: string) {
    return this.service.listHeaders(id);
  }

  @Post(':id/headers')
  @WebhookNotFound()
  @ApiOperation({ operationId: 'createWebhookHeader', summary: 'Add a header sent with every delivery' })
  @ApiCreatedResponse({ type: WebhookHeaderShowResponse })
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: `Name or Value is not valid, or with this header ${OVER_HEADER_LIMITS}; nothing is stored`,
  })
  @ApiConflictResponse({
    type: PortalErrorBody,
    description: 'the webhook already has a header of that name (names are case-insensitive); nothing is stored',
  })
  addHeader(@Param('id') id: string, @Body() dto: WebhookHeaderInput) {
    return this.service.addHeader(id, dto);
  }

  @Get(':id/headers/:headerId')
  @HeaderNotFound()
  @ApiOperation({ operationId: 'getWebhookHeader', summary: 'Get one header of a webhook' })
  @ApiOkResponse({ type: WebhookHeaderShowResponse })
  getHeader(@Param('id') id: string, @Param('headerId') headerId: string) {
    return this.service.getHeader(id, headerId);
  }

  @Put(':id/headers/:headerId')
  @HeaderNotFound()
  @ApiOperation({ operationId: 'updateWebhookHeader', summary: 'Replace one header of a webhook' })
  @ApiOkResponse({ type: WebhookHeaderShowResponse })
  @ApiUnprocessableEntityResponse({
    type: PortalErrorBody,
    description: `Name or Value is not valid, or with this header in place of the one it replaces ${OVER_HEADER_LIMITS}; the header is kept as it was`,
  })
  @ApiConflictResponse({
    type: PortalErrorBody,
    description:
      'another header of the webhook has that name (names are case-insensitive); the header is kept as it was',
  })
  updateHeader(@Param('id') id: string, @Param('headerId') headerId: string, @Body() dto: WebhookHeaderInput) {
    return this.service.updateHeader(id, headerId, dto);
  }

  @Delete(':id/headers/:headerId')
  @HeaderNotFound()
  @ApiOperation({ operationId: 'deleteWebhookHeader', summary: 'Delete one header of a webhook' })
  @HttpCode(200)
  @ApiOkResponse({ type: PortalDeleteResponse })
  removeHeader(@Param('id') id: string, @Param('headerId') headerId: string) {
    return this.service.removeHeader(id, headerId);
  }
}
