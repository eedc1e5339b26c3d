import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Actor, DashboardActor, DashboardAuth } from '../../common/auth';
import { DashboardCreateUserDto } from './dto/create-user.dto';
import { PageQueryDto } from '../page-query.dto';
import {
  CreateUserResponseDto,
  DeleteUserResponseDto,
  UserListResponseDto,
  UserResponseDto,
} from './dto/user-response.dto';
import { UsersService } from './users.service';
import { BodyRefusalPrefix } from '../../common/http/input-policy';
import { EMAIL_TAKEN, USER_VALIDATION_FAILED } from './users.errors';

const USER_ID = { name: 'id', description: 'user id (24 hex)' };
const NO_PERMISSION = '`access denied: You do not have permission to access <path>`';
/** The other 403 of the writes: a caller without IsAdmin acts only on permissions it holds itself. */
const BEYOND_CALLER = (whose: string) =>
  `${NO_PERMISSION}; or \`access denied: You cannot grant or remove permissions you do not hold (<areas>)\`: ` +
  `the caller is not IsAdmin, and ${whose} an area at a level above the caller's own, or IsAdmin or ResetPassword \`admin\``;

/** Dashboard users: Authorization: Bearer <access key>, area `users`. */
@ApiTags('dashboard: users')
@ApiUnauthorizedResponse({ description: 'missing, wrong or inactive access key' })
@ApiForbiddenResponse({ description: NO_PERMISSION })
@Controller('api/users')
export class UsersController {
  constructor(private readonly service: UsersService) {}

  @Post()
  @BodyRefusalPrefix(USER_VALIDATION_FAILED)
  @HttpCode(200)
  @DashboardAuth('users', 'write')
  @ApiOperation({
    operationId: 'createUser',
    summary: 'Add a dashboard user to the caller’s organisation (permissions no wider than the caller’s)',
  })
  @ApiBody({ type: DashboardCreateUserDto })
  @ApiOkResponse({ type: CreateUserResponseDto })
  @ApiBadRequestResponse({ description: '`User object validation failed. <reasons>`' })
  @ApiForbiddenResponse({
    description: BEYOND_CALLER('the new user would hold'),
  })
  @ApiConflictResponse({ description: EMAIL_TAKEN.dashboard })
  create(@Actor() actor: DashboardActor, @Body() body: unknown) {
    // validated in the service: its failures read `User object validation failed. ...`, listing the first 20 reasons
    return this.service.create(actor, body);
  }

  @Get()
  @DashboardAuth('users', 'read')
  @ApiOperation({ operationId: 'listUsers', summary: 'Users of the caller’s organisation, newest first' })
  @ApiOkResponse({ type: UserListResponseDto })
  list(@Actor() actor: DashboardActor, @Query() query: PageQueryDto) {
    return this.service.list(actor, query.p);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getUser', summary: 'Get a user of the caller’s organisation' })
  @DashboardAuth('users', 'read')
  @ApiParam(USER_ID)
  @ApiOkResponse({ type: UserResponseDto })
  @ApiNotFoundResponse({ description: 'User not found (also for a user of another organisation)' })
  get(@Actor() actor: DashboardActor, @Param('id') id: string) {
    return this.service.get(actor, id);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteUser', summary: 'Delete a user of the caller’s organisation' })
  @DashboardAuth('users', 'write')
  @ApiParam(USER_ID)
  @ApiOkResponse({ type: DeleteUserResponseDto })
  @ApiForbiddenResponse({ description: BEYOND_CALLER('the user holds') })
  @ApiNotFoundResponse({ description: 'User not found (also for a user of another organisation)' })
  remove(@Actor() actor: DashboardActor, @Param('id') id: string) {
    return this.service.remove(actor, id);
  }
}
