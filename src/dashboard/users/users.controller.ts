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
import { CreateUserDto } from './dto/create-user.dto';
import { PageQueryDto } from '../page-query.dto';
import {
  CreateUserResponseDto,
  DeleteUserResponseDto,
  UserListResponseDto,
  UserResponseDto,
} from './dto/user-response.dto';
import { UsersService } from './users.service';

const USER_ID = { name: 'id', description: 'user id (24 hex)' };

/** Dashboard users: Authorization: Bearer <access key>, area `users`. */
@ApiTags('dashboard: users')
@ApiUnauthorizedResponse({ description: 'missing, wrong or inactive access key' })
@ApiForbiddenResponse({ description: '`access denied: You do not have permission to access <path>`' })
@Controller('api/users')
export class UsersController {
  constructor(private readonly service: UsersService) {}

  @Post()
  @HttpCode(200)
  @DashboardAuth('users', 'write')
  @ApiOperation({
    operationId: 'createUser',
    summary: 'Add a dashboard user to the caller’s organisation (permissions no wider than the caller’s)',
  })
  @ApiBody({ type: CreateUserDto })
  @ApiOkResponse({ type: CreateUserResponseDto })
  @ApiBadRequestResponse({ description: '`User object validation failed. <reasons>`' })
  @ApiConflictResponse({ description: 'User email already exists for this org.' })
  create(@Actor() actor: DashboardActor, @Body() body: unknown) {
    // validated in the service: its failures read `User object validation failed. ...`, listing every reason
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
  @ApiNotFoundResponse({ description: 'User not found (also for a user of another organisation)' })
  remove(@Actor() actor: DashboardActor, @Param('id') id: string) {
    return this.service.remove(actor, id);
  }
}
