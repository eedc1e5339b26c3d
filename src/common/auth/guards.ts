import { CanActivate, ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import { Repository } from 'typeorm';
import { AppConfig } from '../../config';
import { UserEntity } from '../../dashboard/users/user.entity';
import { secretsEqual, sha256Hex } from '../crypto/secret-box';
import { ACTOR_KEY, DashboardActor } from './dashboard-actor';
import { AccessLevel, hasPermission, PermissionArea } from './permissions';

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export const GATEWAY_AUTH_MESSAGE = 'Attempted administrative access with invalid or missing key!';

/** Gateway family: `X-Gateway-Authorization: <gateway secret>`; 403 otherwise. */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}
  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (!secretsEqual(header(req, 'x-gateway-authorization'), this.config.secrets.gateway)) throw new ForbiddenException(GATEWAY_AUTH_MESSAGE);
    return true;
  }
}

/** Admin family: `Admin-Auth: <admin secret>`; 401 otherwise. */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}
  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    if (!secretsEqual(header(req, 'admin-auth'), this.config.secrets.admin)) throw new UnauthorizedException('Not authorised');
    return true;
  }
}

/** Portal family: `Authorization: <token>` or `Authorization: Bearer <token>`; 401 otherwise. */
@Injectable()
export class PortalAuthGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}
  canActivate(ctx: ExecutionContext): boolean {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const raw = header(req, 'authorization')?.trim();
    const token = raw?.replace(/^Bearer\s+/i, '');
    if (!secretsEqual(token, this.config.secrets.portal)) throw new UnauthorizedException('Not authorised: missing or invalid API token');
    return true;
  }
}

export const DASHBOARD_PERMISSION_KEY = 'dashboardPermission';
export interface RequiredPermission {
  area: PermissionArea;
  level: AccessLevel;
}

/**
 * Dashboard family: `Authorization: Bearer <user access key>` of an active user (401 otherwise),
 * holding the permission the route declares (403 otherwise). Puts the DashboardActor on the request.
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest & Record<string, unknown>>();
    const raw = header(req, 'authorization')?.trim() ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(raw);
    if (!match) throw new UnauthorizedException('Not authorised');
    const user = await this.users.findOne({ where: { accessKeyHash: sha256Hex(match[1]) } });
    if (!user || !user.active) throw new UnauthorizedException('Not authorised');

    const required = this.reflector.getAllAndOverride<RequiredPermission | undefined>(DASHBOARD_PERMISSION_KEY, [ctx.getHandler(), ctx.getClass()]);
    if (required && !hasPermission(user.userPermissions, required.area, required.level)) {
      throw new ForbiddenException(`access denied: You do not have permission to access ${req.url.split('?')[0]}`);
    }
    const actor: DashboardActor = {
      userId: user.id,
      orgId: user.orgId,
      isSuperUser: user.orgId === '' && user.userPermissions?.IsAdmin === 'admin',
      permissions: user.userPermissions ?? {},
    };
    req[ACTOR_KEY] = actor;
    return true;
  }
}
