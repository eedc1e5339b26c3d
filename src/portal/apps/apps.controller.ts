import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { PortalAuth } from '../../common/auth';
import { PortalPageQuery } from '../../common/http/pagination';
import { PortalDeleteResponse } from '../delete-response.dto';
import { PortalErrorBody } from '../../common/errors/error-bodies';
import { PortalIdPipe } from '../portal-id.pipe';
import { AppError } from './apps.errors';
import { AppsService } from './apps.service';
import { AppResponse } from './dto/app-response.dto';
import { CreateAppDto } from './dto/create-app.dto';
import { UpdateAppDto } from './dto/update-app.dto';

const Id = () => Param('id', new PortalIdPipe(AppError.notFound));
const ID_PARAM = { name: 'id', type: 'integer', description: 'application id' } as const;

@ApiTags('portal')
@PortalAuth()
@ApiUnauthorizedResponse({ type: PortalErrorBody, description: 'missing or wrong portal API token' })
@ApiUnprocessableEntityResponse({ type: PortalErrorBody, description: 'validation failed; every reason is listed' })
@Controller('portal-api/apps')
export class AppsController {
  constructor(private readonly service: AppsService) {}

  @Post()
  @ApiOperation({ operationId: 'createApp', summary: 'Create an application' })
  // the portal product answers 200 here (other portal creations answer 201)
  @HttpCode(200)
  @ApiOkResponse({ type: AppResponse, description: 'created' })
  create(@Body() dto: CreateAppDto) {
    return this.service.create(dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listApps', summary: 'List applications' })
  @ApiOkResponse({ type: [AppResponse] })
  list(@Query() query: PortalPageQuery) {
    return this.service.list(query);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getApp', summary: 'Get an application' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AppResponse })
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such application' })
  get(@Id() id: number) {
    return this.service.get(id);
  }

  @Put(':id')
  @ApiOperation({ operationId: 'updateApp', summary: 'Update an application (fields left out keep their value)' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AppResponse })
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such application' })
  update(@Id() id: number, @Body() dto: UpdateAppDto) {
    return this.service.update(id, dto);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteApp', summary: 'Delete an application with its access requests' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: PortalDeleteResponse, description: 'deleted with its access requests and their credentials' })
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such application' })
  remove(@Id() id: number) {
    return this.service.remove(id);
  }
}
