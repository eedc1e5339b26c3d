import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiBody,
  ApiConsumes,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiServiceUnavailableResponse,
  ApiTags,
} from '@nestjs/swagger';
import { GatewayAuth } from '../../common/auth';
import { OasWriteResponseDto } from './dto/oas-write-response.dto';
import { EXTENSION } from './oas-document';
import { OasApisService } from './oas-apis.service';
import { CUSTOM_DOMAIN } from './oas-patch';
import { LISTEN_PATH_PATTERN, MAX_URL_LENGTH } from './oas.validator';
import { VALIDATION_LIMITS } from './oas-validation.pool';

const OAS_DOCUMENT_SCHEMA = {
  type: 'object' as const,
  description:
    `An OpenAPI 3 document (openapi, info, paths, components, security, servers) with the gateway extension \`${EXTENSION}\` ` +
    '(`paths` is required of a 3.0 document, not of a 3.1 one).',
  required: ['openapi', 'info', EXTENSION],
  additionalProperties: true,
  properties: {
    openapi: { type: 'string', example: '3.0.3' },
    info: { type: 'object', additionalProperties: true },
    paths: { type: 'object', additionalProperties: true },
    [EXTENSION]: {
      type: 'object',
      additionalProperties: true,
      description:
        'info.name, info.id, info.orgId, info.categories, info.state.active, server.listenPath.value/strip, upstream.url',
      properties: {
        info: { type: 'object', additionalProperties: true },
        server: { type: 'object', additionalProperties: true },
        upstream: { type: 'object', additionalProperties: true },
      },
    },
  },
};

/** PATCH's body: the extension may be left out (the stored one is kept, with what the body's members change). */
const OAS_PATCH_SCHEMA = {
  ...OAS_DOCUMENT_SCHEMA,
  description: `${OAS_DOCUMENT_SCHEMA.description} The extension may be left out: the stored one is kept.`,
  required: ['openapi', 'info'],
};

/** Every write validates its document on one of a few threads; when they stay taken, the document is not at fault. */
const BUSY = {
  description:
    `the service is busy validating other OpenAPI documents (no thread freed within ${VALIDATION_LIMITS.waitMs / 1000} s, ` +
    `or ${VALIDATION_LIMITS.maxWaiting} documents already wait): send the request again after Retry-After`,
  headers: {
    'Retry-After': {
      description: 'seconds to wait',
      schema: { type: 'integer' as const, example: VALIDATION_LIMITS.runMs / 1000 },
    },
  },
};

/** Read back, a stored definition must be one that could be sent again. */
const TOO_LARGE = 'a definition that would be stored larger than a request body may be (1 MiB)';

const API_ID = { name: 'apiID', description: 'the API id (x-gateway-api-gateway.info.id)' };

/** Gateway routes for OAS API definitions; credential X-Gateway-Authorization, errors `{status, message}`. */
@ApiTags('gateway: API definitions')
// the gateway family takes JSON sent as text/plain too (the input policy)
@ApiConsumes('application/json', 'text/plain')
@GatewayAuth()
@Controller('gateway/apis/oas')
export class OasApisController {
  constructor(private readonly service: OasApisService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'createOasApi',
    summary: 'Create an API definition (id from x-gateway-api-gateway.info.id, or generated)',
  })
  @ApiBody({ schema: OAS_DOCUMENT_SCHEMA })
  @ApiOkResponse({ type: OasWriteResponseDto })
  @ApiBadRequestResponse({
    description: `not JSON, not a valid OpenAPI 3 document, an invalid extension, or ${TOO_LARGE}`,
  })
  @ApiConflictResponse({ description: 'an API with the id in x-gateway-api-gateway.info.id already exists' })
  @ApiServiceUnavailableResponse(BUSY)
  create(@Body() body: unknown) {
    return this.service.create(body);
  }

  @Get()
  @ApiOperation({ operationId: 'listOasApis', summary: 'Every API definition, as stored' })
  @ApiOkResponse({ schema: { type: 'array', items: OAS_DOCUMENT_SCHEMA } })
  list() {
    return this.service.list();
  }

  @Get(':apiID')
  @ApiOperation({ operationId: 'getOasApi', summary: 'Get an API definition, as stored' })
  @ApiParam(API_ID)
  @ApiOkResponse({ schema: OAS_DOCUMENT_SCHEMA })
  @ApiNotFoundResponse({ description: 'API not found' })
  get(@Param('apiID') id: string) {
    return this.service.get(id);
  }

  @Put(':apiID')
  @ApiOperation({ operationId: 'replaceOasApi', summary: 'Replace an API definition (extension required)' })
  @ApiParam(API_ID)
  @ApiBody({ schema: OAS_DOCUMENT_SCHEMA })
  @ApiOkResponse({ type: OasWriteResponseDto })
  @ApiBadRequestResponse({
    description: `a blank apiID, not JSON, not a valid OpenAPI 3 document, an invalid extension, or ${TOO_LARGE}`,
  })
  @ApiNotFoundResponse({ description: 'API not found' })
  @ApiServiceUnavailableResponse(BUSY)
  replace(@Param('apiID') id: string, @Body() body: unknown) {
    return this.service.replace(id, body);
  }

  @Patch(':apiID')
  @ApiOperation({
    operationId: 'patchOasApi',
    summary: 'Update the OAS part of an API definition',
    description:
      'Without the extension in the body the stored extension is kept; without `servers` the stored servers are kept. ' +
      'Then the query parameters configure the extension, as an import does.',
  })
  @ApiParam(API_ID)
  @ApiQuery({
    name: 'upstreamURL',
    type: String,
    required: false,
    description: 'sets upstream.url: an absolute http(s) URL, no whitespace or control characters',
    maxLength: MAX_URL_LENGTH,
  })
  @ApiQuery({
    name: 'listenPath',
    type: String,
    required: false,
    description: 'sets server.listenPath.value: starts with /, no whitespace or control characters',
    pattern: LISTEN_PATH_PATTERN,
    maxLength: MAX_URL_LENGTH,
  })
  @ApiQuery({
    name: 'customDomain',
    type: String,
    required: false,
    description: 'sets server.customDomain (empty: disabled)',
    pattern: CUSTOM_DOMAIN.source,
  })
  @ApiQuery({
    name: 'allowList',
    required: false,
    enum: ['true', 'false', '1', '0'],
    description:
      'sets `middleware.operations.<operationId>.allow.enabled` on every operation (and turns off its `block`)',
  })
  @ApiQuery({
    name: 'validateRequest',
    required: false,
    enum: ['true', 'false', '1', '0'],
    description:
      'sets `middleware.operations.<operationId>.validateRequest` `{enabled, errorResponseCode: 422}` on every operation ' +
      "with a JSON request body or parameters (its own or its path's)",
  })
  @ApiQuery({
    name: 'mockResponse',
    required: false,
    enum: ['true', 'false', '1', '0'],
    description:
      'sets `middleware.operations.<operationId>.mockResponse` `{enabled, fromOASExamples: {enabled}}` on every operation ' +
      'with a response documenting an example, examples or a schema',
  })
  @ApiQuery({
    name: 'authentication',
    required: false,
    enum: ['true', 'false', '1', '0'],
    description: 'sets server.authentication.enabled',
  })
  @ApiBody({ schema: OAS_PATCH_SCHEMA })
  @ApiOkResponse({ type: OasWriteResponseDto })
  @ApiBadRequestResponse({
    description:
      'a blank apiID (Must specify an apiID to patch), request malformed, not a valid OpenAPI 3 document, ' +
      'an unusable query parameter ' +
      `(also one that would key an operation \`__proto__\`), or ${TOO_LARGE}`,
  })
  @ApiNotFoundResponse({ description: 'API not found' })
  @ApiServiceUnavailableResponse(BUSY)
  patch(@Param('apiID') id: string, @Body() body: unknown, @Query() query: Record<string, unknown>) {
    return this.service.patch(id, body, query);
  }

  @Delete(':apiID')
  @ApiOperation({ operationId: 'deleteOasApi', summary: 'Delete an API definition' })
  @ApiParam(API_ID)
  @ApiOkResponse({ type: OasWriteResponseDto })
  @ApiNotFoundResponse({ description: 'API not found' })
  remove(@Param('apiID') id: string) {
    return this.service.remove(id);
  }
}
