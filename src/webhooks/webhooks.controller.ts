import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { PortalAuth } from '../common/auth';
import { PortalPageQuery } from '../common/http/pagination';
import { ApiEventCallbacks } from '../events/event-messages';
import { CreatedWebhookResponse, CreateWebhookDto, SavedWebhookResponse, UpdateWebhookDto, WebhookHeaderInput, WebhookHeaderResponse, WebhookResponse, WebhookSecretResponse } from './dto/webhook.dto';
import { WebhooksService } from './webhooks.service';

class DeletedResponse {
  status: string;
  message: string;
}

@ApiTags('portal webhooks')
@PortalAuth()
@ApiNotFoundResponse({ description: 'no such webhook (or header)' })
@Controller('portal-api/webhooks')
export class WebhooksController {
  constructor(private readonly service: WebhooksService) {}

  @Post()
  @ApiOperation({ operationId: 'createWebhook', summary: 'Register a webhook (the answer carries its signing Secret)' })
  @ApiCreatedResponse({ type: CreatedWebhookResponse })
  @ApiEventCallbacks()
  @ApiUnprocessableEntityResponse({ description: 'validation failed; errors lists every reason' })
  create(@Body() dto: CreateWebhookDto) {
    return this.service.create(dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhooks', summary: 'List webhooks' })
  @ApiOkResponse({ type: [WebhookResponse] })
  list(@Query() q: PortalPageQuery) {
    return this.service.list(q);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Get a webhook' })
  @ApiOkResponse({ type: WebhookResponse })
  get(@Param('id') id: string) {
    return this.service.get(id);
  }

  @Put(':id')
  @ApiOperation({ operationId: 'updateWebhook', summary: 'Update a webhook (fields given replace stored ones)' })
  @ApiOkResponse({ type: SavedWebhookResponse })
  update(@Param('id') id: string, @Body() dto: UpdateWebhookDto) {
    return this.service.update(id, dto);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteWebhook', summary: 'Delete a webhook' })
  @ApiOkResponse({ type: DeletedResponse })
  remove(@Param('id') id: string) {
    return this.service.remove(id);
  }

  @Get(':id/secret')
  @ApiOperation({ operationId: 'getWebhookSecret', summary: 'Get the signing secret of a webhook' })
  @ApiOkResponse({ type: WebhookSecretResponse })
  secret(@Param('id') id: string) {
    return this.service.secret(id);
  }

  @Get(':id/headers')
  @ApiOperation({ operationId: 'listWebhookHeaders', summary: 'List the headers sent with every delivery' })
  @ApiOkResponse({ type: [WebhookHeaderResponse] })
  listHeaders(@Param('id') id: string) {
    return this.service.listHeaders(id);
  }

  @Post(':id/headers')
  @ApiOperation({ operationId: 'createWebhookHeader', summary: 'Add a header sent with every delivery' })
  @ApiCreatedResponse({ type: WebhookHeaderResponse })
  addHeader(@Param('id') id: string, @Body() dto: WebhookHeaderInput) {
    return this.service.addHeader(id, dto);
  }

  @Get(':id/headers/:headerId')
  @ApiOperation({ operationId: 'getWebhookHeader', summary: 'Get one header of a webhook' })
  @ApiOkResponse({ type: WebhookHeaderResponse })
  getHeader(@Param('id') id: string, @Param('headerId') headerId: string) {
    return this.service.getHeader(id, headerId);
  }

  @Put(':id/headers/:headerId')
  @ApiOperation({ operationId: 'updateWebhookHeader', summary: 'Replace one header of a webhook' })
  @ApiOkResponse({ type: WebhookHeaderResponse })
  updateHeader(@Param('id') id: string, @Param('headerId') headerId: string, @Body() dto: WebhookHeaderInput) {
    return this.service.updateHeader(id, headerId, dto);
  }

  @Delete(':id/headers/:headerId')
  @ApiOperation({ operationId: 'deleteWebhookHeader', summary: 'Delete one header of a webhook' })
  @HttpCode(200)
  @ApiOkResponse({ type: DeletedResponse })
  removeHeader(@Param('id') id: string, @Param('headerId') headerId: string) {
    return this.service.removeHeader(id, headerId);
  }
}
