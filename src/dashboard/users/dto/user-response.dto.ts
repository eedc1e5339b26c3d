import { ApiProperty } from '@nestjs/swagger';
import { USER_PERMISSIONS_SCHEMA } from './create-user.dto';

/** A dashboard user as returned. Never carries the password or its hash. */
export class UserResponseDto {
  @ApiProperty({ description: '24 lower-case hex characters' }) id: string;
  @ApiProperty() email_address: string;
  @ApiProperty() first_name: string;
  @ApiProperty() last_name: string;
  @ApiProperty(USER_PERMISSIONS_SCHEMA) user_permissions: Record<string, string>;
  @ApiProperty({ description: 'shown to the user itself and to IsAdmin callers; empty otherwise' }) access_key: string;
  @ApiProperty() active: boolean;
  @ApiProperty({ type: 'object', additionalProperties: true }) api_model: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty() group_id: string;
  @ApiProperty({ format: 'date-time', description: '0001-01-01T00:00:00Z when never' }) last_login_date: string;
  @ApiProperty() org_id: string;
  @ApiProperty({ type: 'integer' }) password_max_days: number;
  @ApiProperty({ format: 'date-time', description: '0001-01-01T00:00:00Z when never' }) password_updated: string;
}

/** POST /admin/users: Message is the new user's access key, Meta the user. */
export class AdminCreateUserResponseDto {
  @ApiProperty({ example: 'OK' }) Status: string;
  @ApiProperty({ description: 'the access key of the new user' }) Message: string;
  @ApiProperty({ type: UserResponseDto }) Meta: UserResponseDto;
  @ApiProperty() ID: string;
}

/** POST /api/users: Meta and ID are the new user's id. */
export class CreateUserResponseDto {
  @ApiProperty({ example: 'OK' }) Status: string;
  @ApiProperty({ example: 'User created' }) Message: string;
  @ApiProperty({ type: 'string', description: 'the new user id' }) Meta: string;
  @ApiProperty({ description: 'the new user id' }) ID: string;
}

export class UserListResponseDto {
  @ApiProperty({ type: UserResponseDto, isArray: true }) users: UserResponseDto[];
  @ApiProperty({ type: 'integer', description: 'ceil(total / page size); 0 when there are none' }) pages: number;
}

export class DeleteUserResponseDto {
  @ApiProperty({ example: 'OK' }) Status: string;
  @ApiProperty({ example: 'User deleted' }) Message: string;
  @ApiProperty({ type: 'string', nullable: true, example: null }) Meta: null;
}
