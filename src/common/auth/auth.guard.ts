import { CanActivate, ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { Repository } from 'typeorm';
import { AppConfig } from '../../config';
import { UserEntity } from '../../dashboard/users/user.entity';
import { createHash, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../crypto/secret-box';
import { Family, originForm } from '../errors/families';
import { ACTOR_KEY, DashboardActor } from './dashboard-actor.decorator';
import { claimIdempotencyKey } from '../idempotency/keyed-request';
import { countHeader } from '../http/raw-headers';
import { AccessLevel, hasPermission, PermissionArea } from './permissions';

/**
 * The credential header `name` (lower case), or undefined when the request does not carry it exactly once: two
 * credentials are ambiguous, and Node would otherwise keep only the first `Authorization` (and join others).
 * Without `raw` (the request, whose rawHeaders tell the copies apart), the parsed headers decide.
 */
function header(headers: IncomingHttpHeaders, name: string, raw?: object): string | undefined {
  const v = headers[name];
  if (Array.isArray(v)) return undefined;
  const rawHeaders = (raw as { rawHeaders?: string[] } | undefined)?.rawHeaders;
  return v !== undefined && rawHeaders && countHeader(rawHeaders, name) > 1 ? undefined : v;
}

export const GATEWAY_AUTH_MESSAGE = 'Attempted administrative access with invalid or missing key!';

/** Where the onRequest check leaves the dashboard user it found, so the guard does not look it up again. */
const AUTHENTICATED_USER = Symbol('authenticatedDashboardUser');
type RawWithUser = { [AUTHENTICATED_USER]?: UserEntity };
/** Where a check leaves the family whose secret the request carries, so the guard does not check it again. */
const AUTHENTICATED_FAMILY = Symbol('authenticatedFamily');
type RawWithFamily = { [AUTHENTICATED_FAMILY]?: Family };

const digest = (v: string): Buffer => createHash('sha256').update(v).digest();

/** Compares a given secret with the digest of the expected one in constant time (digests, so lengths do not leak). */
function matches(given: string | undefined, expected: Buffer): boolean {
  return typeof given === 'string' && timingSafeEqual(digest(given), expected);
}

/**
 * The credential check of each family, in one place. The Nest guards call it, and so does an onRequest
 * hook that runs before the body is read, so an anonymous caller is refused without its body being parsed.
 */
@Injectable()
export class FamilyAuthenticator {
  /** The digests of the secrets, made once. */
  private readonly expected: { gateway: Buffer; admin: Buffer; portal: Buffer };

  constructor(
    config: AppConfig,
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
  ) {
    const { gateway, admin, portal } = config.secrets;
    this.expected = { gateway: digest(gateway), admin: digest(admin), portal: digest(portal) };
  }

  /**
   * Throws the family's 401/403 unless the headers carry its credential; dashboard: returns the user. With `raw`
   * (the request), a secret found right is remembered on it, and the request's next check of it passes at once.
   */
  async authenticate(family: Family, headers: IncomingHttpHeaders, raw?: object): Promise<UserEntity | undefined> {
    if (family === 'dashboard') return this.dashboardUser(headers, raw);
    if (raw && (raw as RawWithFamily)[AUTHENTICATED_FAMILY] === family) return undefined;
    switch (family) {
      case 'gateway':
        if (!matches(header(headers, 'x-gateway-authorization', raw), this.expected.gateway))
          throw new ForbiddenException(GATEWAY_AUTH_MESSAGE);
        break;
      case 'admin':
        if (!matches(header(headers, 'admin-auth', raw), this.expected.admin))
          throw new UnauthorizedException('Not authorised');
        break;
      case 'portal': {
        const token = header(headers, 'authorization', raw)
          ?.trim()
          .replace(/^Bearer\s+/i, '');
        if (!matches(token, this.expected.portal))
          throw new UnauthorizedException('Not authorised: missing or invalid API token');
        break;
      }
      default:
        return undefined;
    }
    if (raw) (raw as RawWithFamily)[AUTHENTICATED_FAMILY] = family;
    return undefined;
  }

  /** The active user whose access key the request carries (401 otherwise); looked up once per request. */
  async dashboardUser(headers: IncomingHttpHeaders, raw?: object): Promise<UserEntity> {
    const known = (raw as RawWithUser | undefined)?.[AUTHENTICATED_USER];
    if (known) return known;
    const match = /^Bearer\s+(\S+)$/i.exec(header(headers, 'authorization', raw)?.trim() ?? '');
    if (!match) throw new UnauthorizedException('Not authorised');
    const user = await this.users.findOne({ where: { accessKeyHash: sha256Hex(match[1]) } });
    if (!user || !user.active) throw new UnauthorizedException('Not authorised');
    if (raw) (raw as RawWithUser)[AUTHENTICATED_USER] = user;
    return user;
  }
}

/** Gateway family: `X-Gateway-Authorization: <gateway secret>`; 403 otherwise. */
@Injectable()
export class GatewayAuthGuard implements CanActivate {
  constructor(private readonly auth: FamilyAuthenticator) {}
  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    await this.auth.authenticate('gateway', req.headers, req.raw);
    return true;
  }
}

/** Admin family: `Admin-Auth: <admin secret>`; 401 otherwise. */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(private readonly auth: FamilyAuthenticator) {}
  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    await this.auth.authenticate('admin', req.headers, req.raw);
    const claiming = claimIdempotencyKey(req);
    if (claiming) await claiming;
    return true;
  }
}

/** Portal family: `Authorization: <token>` or `Authorization: Bearer <token>`; 401 otherwise. */
@Injectable()
export class PortalAuthGuard implements CanActivate {
  constructor(private readonly auth: FamilyAuthenticator) {}
  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    await this.auth.authenticate('portal', req.headers, req.raw);
    const claiming = claimIdempotencyKey(req);
    if (claiming) await claiming;
    return true;
  }
}

export const DASHBOARD_PERMISSION_KEY = 'dashboardPermission';
export interface RequiredPermission {
  area: PermissionArea;
  level: AccessLevel;
}

/** The permission a dashboard route declares (DashboardAuth puts it in the route's Fastify config). */
function requiredPermission(request: Pick<FastifyRequest, 'routeOptions'>): RequiredPermission | undefined {
  const config = request.routeOptions?.config as { [DASHBOARD_PERMISSION_KEY]?: RequiredPermission } | undefined;
  return config?.[DASHBOARD_PERMISSION_KEY];
}

/** Throws the dashboard's 403 unless `user` holds what the route requested by `request` declares. */
export function checkPermission(user: UserEntity, request: Pick<FastifyRequest, 'routeOptions' | 'url'>): void {
  const required = requiredPermission(request);
  if (required && !hasPermission(user.userPermissions, required.area, required.level)) {
    throw new ForbiddenException(
      `access denied: You do not have permission to access ${originForm(request.url).split('?')[0]}`,
    );
  }
}

/**
 * Dashboard family: `Authorization: Bearer <user access key>` of an active user (401 otherwise),
 * holding the permission the route declares (403 otherwise). Puts the DashboardActor on the request.
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate {
  constructor(private readonly auth: FamilyAuthenticator) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const req = ctx.switchToHttp().getRequest<FastifyRequest & Record<string, unknown>>();
    const user = await this.auth.dashboardUser(req.headers, req.raw);
    checkPermission(user, req);
    const actor: DashboardActor = {
      userId: user.id,
      orgId: user.orgId,
      isSuperUser: user.orgId === '' && user.userPermissions?.IsAdmin === 'admin',
      permissions: user.userPermissions ?? {},
    };
    req[ACTOR_KEY] = actor;
    const claiming = claimIdempotencyKey(req);
    if (claiming) await claiming;
    return true;
  }
}
