import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsEmail, IsInt, IsObject, IsString, Max, Min, MinLength } from 'class-validator';
import { MAX_OBJECT_MEMBERS, OBJECT_MEMBERS_NOTE } from '../../../common/http/input-policy';
import { MaxLength } from '../../../common/http/max-length.decorator';
import { OptionalNullable } from '../../../common/http/optional-nullable.decorator';
import { MaxJsonBytes } from '../../../common/http/max-json-bytes.decorator';
import { ADMIN_FLAGS, ADMIN_LEVELS, AREA_LEVELS, PERMISSION_AREAS } from '../../../common/auth/permissions';
import { PRINTABLE_TEXT_PATTERN } from '../../../common/http/required-text.decorator';

/**
 * user_permissions as the service takes it: each named area at read, write or deny, the administrative flags at their
 * own levels, and nothing else.
 */
export const USER_PERMISSIONS_SCHEMA = {
  type: 'object' as const,
  properties: Object.fromEntries([
    ...PERMISSION_AREAS.map((area) => [area, { type: 'string', enum: [...AREA_LEVELS] }]),
    ...ADMIN_FLAGS.map((flag) => [flag, { type: 'string', enum: [...ADMIN_LEVELS] }]),
  ]),
  additionalProperties: false,
  description:
    'each named area at read, write (which implies read) or deny (as is absence); IsAdmin and ResetPassword at admin ' +
    "or deny, IsAdmin admin granting every area in the user's organisation (with an empty org_id, in every one)",
};

/** The most api_model may take as JSON: every user is answered with it, ten to a page of GET /api/users. */
export const MAX_API_MODEL_BYTES = 65_536;

const PERMISSIONS_EXAMPLE = { apis: 'read', analytics: 'read', users: 'write' };

/**
 * A dashboard user as created. `user_permissions` is required on POST /api/users and
 * optional on POST /admin/users. Read-only members (id, access_key, timestamps) are ignored if sent.
 */
export class CreateUserDto {
  @ApiProperty({
    format: 'email',
    example: 'jane@example.com',
    // the format alone would promise every RFC 5321 address; the check is narrower in the domain, wider in the rest
    description:
      'an e-mail address whose domain is a name with a dot and a last label of two or more letters (or `xn--...`): ' +
      '`a@b.c`, `a@localhost` and `a@[127.0.0.1]` are refused; a local part of at most 64 characters, which may ' +
      'hold letters beyond ASCII (`ümlaut@example.com`) or be quoted (`"a b"@example.com`), and a domain that may too',
  })
  // class-validator checks the decorator nearest the property first (stopAtFirstError reports that one)
  @IsDefined({ message: '$property is required' })
  @IsEmail({}, { message: '$property must be an email address' })
  @MaxLength(254)
  @IsString()
  email_address: string;

  // one line of text that shows something (checked with the body, as the portal's names are)
  @ApiProperty({ example: 'Jane', pattern: PRINTABLE_TEXT_PATTERN })
  @IsDefined({ message: '$property is required' })
  @MaxLength(256)
  @MinLength(1, { message: '$property must not be empty' })
  @IsString()
  first_name: string;

  // one line of text that shows something (checked with the body, as the portal's names are)
  @ApiProperty({ example: 'Doe', pattern: PRINTABLE_TEXT_PATTERN })
  @IsDefined({ message: '$property is required' })
  @MaxLength(256)
  @MinLength(1, { message: '$property must not be empty' })
  @IsString()
  last_name: string;

  @OptionalNullable({
    ...USER_PERMISSIONS_SCHEMA,
    description: `${USER_PERMISSIONS_SCHEMA.description}. Required on POST /api/users (default on POST /admin/users: IsAdmin and ResetPassword admin); an empty object grants nothing.`,
    example: PERMISSIONS_EXAMPLE,
  })
  @IsObject()
  user_permissions?: Record<string, string>;

  @OptionalNullable({ default: false, description: 'inactive users cannot use the dashboard routes' })
  @IsBoolean()
  active?: boolean;

  @OptionalNullable({ description: 'stored only as a salted scrypt hash; never returned', writeOnly: true })
  @MaxLength(1024)
  @MinLength(1, { message: '$property must not be empty' })
  @IsString()
  password?: string;

  @OptionalNullable({
    description: 'POST /admin/users and super users only; others create users in their own organisation',
    default: '',
  })
  @MaxLength(128)
  @IsString()
  org_id?: string;

  @OptionalNullable({ default: '' })
  @MaxLength(128)
  @IsString()
  group_id?: string;

  @OptionalNullable({
    type: 'object',
    additionalProperties: true,
    maxProperties: MAX_OBJECT_MEMBERS,
    default: {},
    description: `${OBJECT_MEMBERS_NOTE}; its JSON text takes at most ${MAX_API_MODEL_BYTES} bytes (UTF-8)`,
  })
  @MaxJsonBytes(MAX_API_MODEL_BYTES)
  @IsObject()
  api_model?: Record<string, unknown>;

  @OptionalNullable({ default: 0, minimum: 0 })
  @Max(36500)
  @Min(0)
  @IsInt()
  password_max_days?: number;
}

/** The body of POST /api/users: as above, with user_permissions required (the service refuses a body without it). */
export class DashboardCreateUserDto extends CreateUserDto {
  // required said apart: the inherited metadata says optional and is merged into this property's
  @ApiProperty({ required: true, nullable: false })
  @ApiProperty({
    ...USER_PERMISSIONS_SCHEMA,
    description: `${USER_PERMISSIONS_SCHEMA.description}; an empty object grants nothing.`,
    example: PERMISSIONS_EXAMPLE,
  })
  declare user_permissions: Record<string, string>;
}
