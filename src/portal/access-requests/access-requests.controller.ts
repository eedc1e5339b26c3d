import { Body, Controller, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadGatewayResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { PortalAuth } from '../../common/auth';
import { PortalDeleteResponse } from '../delete-response.dto';
import { PortalErrorBody } from '../../common/errors/error-bodies';
import { PortalIdPipe } from '../portal-id.pipe';
import { AccessRequestError } from './access-requests.errors';
import { AccessRequestsService } from './access-requests.service';
import { AccessRequestResponse } from './dto/access-request-response.dto';
import { CreateAccessRequestDto } from './dto/create-access-request.dto';
import { ListAccessRequestsQuery } from './dto/list-access-requests-query.dto';
import { UpdateAccessRequestStatusDto } from './dto/update-status.dto';

// named access_request_id, as the interface names the parameter of GET /portal-api/access_requests/{access_request_id}
const Id = () => Param('access_request_id', new PortalIdPipe(AccessRequestError.notFound));
const ID_PARAM = { name: 'access_request_id', type: 'integer', description: 'access request id' } as const;

@ApiTags('portal')
@PortalAuth()
@ApiUnauthorizedResponse({ type: PortalErrorBody, description: 'missing or wrong portal API token' })
@ApiUnprocessableEntityResponse({ type: PortalErrorBody, description: 'validation failed; every reason is listed' })
@Controller('portal-api/access_requests')
export class AccessRequestsController {
  constructor(private readonly service: AccessRequestsService) {}

  @Post()
  @ApiOperation({ operationId: 'createAccessRequest', summary: 'Request access to products for an application' })
  @ApiCreatedResponse({
    type: AccessRequestResponse,
    description: 'created pending, or approved with credentials when ProvisionImmediately',
  })
  @ApiBadGatewayResponse({
    type: PortalErrorBody,
    description: 'ProvisionImmediately with DCREnabled and the identity provider failed: nothing was created',
  })
  create(@Body() dto: CreateAccessRequestDto) {
    return this.service.create(dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listAccessRequests', summary: 'List access requests' })
  @ApiOkResponse({ type: [AccessRequestResponse] })
  list(@Query() query: ListAccessRequestsQuery) {
    return this.service.list(query);
  }

  @Get(':access_request_id')
  @ApiOperation({ operationId: 'getAccessRequest', summary: 'Get an access request with its credentials' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AccessRequestResponse })
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such access request' })
  get(@Id() id: number) {
    return this.service.get(id);
  }

  @Put(':access_request_id/approve')
  @ApiOperation({ operationId: 'approveAccessRequest', summary: 'Approve an access request (issues its credential)' })
  @ApiParam(ID_PARAM)
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such access request' })
  @ApiOkResponse({ type: AccessRequestResponse, description: 'approved (or already approved: nothing changed)' })
  @ApiConflictResponse({ type: PortalErrorBody, description: 'the request is rejected' })
  @ApiBadGatewayResponse({
    type: PortalErrorBody,
    description: 'dynamic client registration failed or is not configured: the request stays pending',
  })
  approve(@Id() id: number) {
    return this.service.changeStatus(id, 'approved');
  }

  @Put(':access_request_id/reject')
  @ApiOperation({ operationId: 'rejectAccessRequest', summary: 'Reject an access request (revokes its credentials)' })
  @ApiParam(ID_PARAM)
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such access request' })
  @ApiOkResponse({
    type: AccessRequestResponse,
    description: 'rejected, credentials revoked (or already rejected: nothing changed)',
  })
  reject(@Id() id: number) {
    return this.service.changeStatus(id, 'rejected');
  }

  @Patch(':access_request_id')
  @ApiOperation({ operationId: 'updateAccessRequestStatus', summary: 'Approve or reject an access request by status' })
  @ApiParam(ID_PARAM)
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such access request' })
  @ApiOkResponse({ type: AccessRequestResponse })
  @ApiConflictResponse({ type: PortalErrorBody, description: 'the state machine does not allow this change' })
  @ApiBadGatewayResponse({
    type: PortalErrorBody,
    description: 'dynamic client registration failed or is not configured: the request stays pending',
  })
  update(@Id() id: number, @Body() dto: UpdateAccessRequestStatusDto) {
    return this.service.changeStatus(id, dto.Status);
  }

  @Delete(':access_request_id')
  @ApiOperation({ operationId: 'deleteAccessRequest', summary: 'Delete an access request with its credentials' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: PortalDeleteResponse, description: 'deleted with its credentials' })
  @ApiNotFoundResponse({ type: PortalErrorBody, description: 'no such access request' })
  remove(@Id() id: number) {
    return this.service.remove(id);
  }
}
