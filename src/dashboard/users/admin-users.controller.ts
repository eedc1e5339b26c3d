import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { AdminAuth } from '../../common/auth';
import { CreateUserDto } from './dto/create-user.dto';
import { AdminCreateUserResponseDto } from './dto/user-response.dto';
import { UsersService } from './users.service';
import { BodyRefusalPrefix } from '../../common/http/input-policy';
import { EMAIL_TAKEN, USER_VALIDATION_FAILED } from './users.errors';

/** Administrative user creation: Admin-Auth. The way in from nothing. */
@ApiTags('admin: users')
@AdminAuth()
@ApiUnauthorizedResponse({ description: 'missing or wrong Admin-Auth' })
@Controller('admin/users')
export class AdminUsersController {
  constructor(private readonly service: UsersService) {}

  @Post()
  @HttpCode(200)
  @BodyRefusalPrefix(USER_VALIDATION_FAILED)
  @ApiOperation({
    operationId: 'adminCreateUser',
    summary: 'Create a user (Message carries its access key)',
    description:
      'Permissions default to {"IsAdmin":"admin","ResetPassword":"admin"}; org_id as given (empty: super user); active defaults to false.',
  })
  @ApiBody({ type: CreateUserDto })
  @ApiOkResponse({ type: AdminCreateUserResponseDto })
  @ApiBadRequestResponse({ description: '`User object validation failed. <reasons>`' })
  @ApiConflictResponse({ description: EMAIL_TAKEN.admin })
  create(@Body() body: unknown) {
    return this.service.createByAdmin(body);
  }
}
