import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, Repository } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { DashboardActor } from '../../common/auth';
import { randomHex, SecretBox, sha256Hex } from '../../common/crypto/secret-box';
import { rfc3339 } from '../../common/http/time';
import { AppConfig } from '../../config';
import { Sql } from '../../database/sql';
import { pageCount, pageWindow } from '../paging';
import { CreateUserDto } from './dto/create-user.dto';
import {
  AdminCreateUserResponseDto,
  CreateUserResponseDto,
  DeleteUserResponseDto,
  UserListResponseDto,
  UserResponseDto,
} from './dto/user-response.dto';
import { hashPassword } from './password';
import { ADMIN_DEFAULT_PERMISSIONS, beyondCaller, parseUserInput } from './user-input';
import { UserEntity } from './user.entity';
import { UserError } from './users.errors';

const USER_ID = /^[0-9a-f]{24}$/;
const EMAIL_UNIQUE_INDEX = 'dashboard_users_org_email';

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly sql: Sql,
  ) {}

  /** POST /admin/users: bootstrap and administration; permissions default to the admin flags, org as given. */
  async createByAdmin(body: unknown): Promise<AdminCreateUserResponseDto> {
    const input = validInput(body, false);
    const { user, accessKey } = await this.insert(
      input,
      input.org_id ?? '',
      input.user_permissions ?? { ...ADMIN_DEFAULT_PERMISSIONS },
      'admin',
    );
    return { Status: 'OK', Message: accessKey, Meta: this.toResponse(user, true), ID: user.id };
  }

  /** POST /api/users: the new user joins the caller's organisation and gets no more than the caller holds. */
  async create(actor: DashboardActor, body: unknown): Promise<CreateUserResponseDto> {
    const input = validInput(body, true);
    const permissions = input.user_permissions!;
    const beyond = beyondCaller(actor.permissions, permissions);
    if (beyond.length) throw UserError.cannotGrant(beyond);
    const orgId = actor.isSuperUser ? (input.org_id ?? '') : actor.orgId;
    const { user } = await this.insert(input, orgId, permissions, 'dashboard');
    return { Status: 'OK', Message: 'User created', Meta: user.id, ID: user.id };
  }

  async list(actor: DashboardActor, p: number | undefined): Promise<UserListResponseDto> {
    const size = this.config.dashboard.pageSize;
    const { offset, limit } = pageWindow(p, size);
    // the page and the count from one snapshot: apart, a user added between them could show on a page counted as none
    const [rows, total] = await this.users.manager.transaction('REPEATABLE READ', (m) =>
      m.findAndCount(this.users.target, {
        where: actor.isSuperUser ? {} : { orgId: actor.orgId },
        order: { createdAt: 'DESC', id: 'DESC' },
        skip: offset,
        take: limit,
      }),
    );
    return { users: rows.map((u) => this.toResponse(u, this.mayReadKey(actor, u))), pages: pageCount(total, size) };
  }

  async get(actor: DashboardActor, id: string): Promise<UserResponseDto> {
    const user = await this.find(actor, id);
    return this.toResponse(user, this.mayReadKey(actor, user));
  }

  async remove(actor: DashboardActor, id: string): Promise<DeleteUserResponseDto> {
    const user = await this.find(actor, id);
    const beyond = beyondCaller(actor.permissions, user.userPermissions ?? {});
    if (beyond.length) throw UserError.cannotGrant(beyond);
    // deleted by one caller only: of concurrent deletes of one user, the others find it gone
    if ((await this.sql.execute(`DELETE FROM dashboard_users WHERE id = $1`, [user.id])) === 0)
      throw UserError.notFound();
    return { Status: 'OK', Message: 'User deleted', Meta: null };
  }

  /** A user of another organisation is "not found", exactly like a missing one. */
  private async find(actor: DashboardActor, id: string): Promise<UserEntity> {
    if (!USER_ID.test(id)) throw UserError.notFound();
    const user = await this.users.findOne({ where: actor.isSuperUser ? { id } : { id, orgId: actor.orgId } });
    if (!user) throw UserError.notFound();
    return user;
  }

  private async insert(
    input: CreateUserDto,
    orgId: string,
    permissions: Record<string, string>,
    api: 'dashboard' | 'admin',
  ): Promise<{ user: UserEntity; accessKey: string }> {
    const accessKey = randomHex(16);
    const user = this.users.create({
      id: randomHex(12),
      orgId,
      emailAddress: input.email_address,
      firstName: input.first_name,
      lastName: input.last_name,
      active: input.active ?? false,
      userPermissions: permissions,
      accessKeyHash: sha256Hex(accessKey),
      accessKeyEncrypted: this.secretBox.encrypt(accessKey),
      passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
      passwordUpdated: input.password !== undefined ? new Date() : null,
      groupId: input.group_id ?? '',
      passwordMaxDays: input.password_max_days ?? 0,
      apiModel: input.api_model ?? {},
      lastLoginDate: null,
    });
    try {
      // through Sql, so that an idempotent request commits it with its stored answer
      await this.sql.entityWrite((m) => m.insert(UserEntity, user as QueryDeepPartialEntity<UserEntity>));
      return { user, accessKey };
    } catch (err) {
      if (
        err instanceof QueryFailedError &&
        (err.driverError as { constraint?: string })?.constraint === EMAIL_UNIQUE_INDEX
      )
        throw UserError.emailTaken(api);
      throw err;
    }
  }

  /** Access keys are credentials: shown to the user itself and to administrators (who can do anything anyway). */
  private mayReadKey(actor: DashboardActor, user: UserEntity): boolean {
    return actor.userId === user.id || actor.permissions.IsAdmin === 'admin';
  }

  private toResponse(user: UserEntity, withKey: boolean): UserResponseDto {
    return {
      id: user.id,
      email_address: user.emailAddress,
      first_name: user.firstName,
      last_name: user.lastName,
      user_permissions: user.userPermissions ?? {},
      access_key: withKey ? this.secretBox.decrypt(user.accessKeyEncrypted) : '',
      active: user.active,
      api_model: user.apiModel ?? {},
      created_at: rfc3339(user.createdAt),
      group_id: user.groupId,
      last_login_date: rfc3339(user.lastLoginDate),
      org_id: user.orgId,
      password_max_days: user.passwordMaxDays,
      password_updated: rfc3339(user.passwordUpdated),
    };
  }
}

function validInput(body: unknown, permissionsRequired: boolean): CreateUserDto {
  const { input, errors } = parseUserInput(body, { permissionsRequired });
  if (!input) throw UserError.invalid(errors);
  return input;
}
