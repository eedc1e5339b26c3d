import { applyDecorators, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiSecurity } from '@nestjs/swagger';
import {
  AdminAuthGuard,
  DASHBOARD_PERMISSION_KEY,
  DashboardAuthGuard,
  GatewayAuthGuard,
  PortalAuthGuard,
  RequiredPermission,
} from './auth.guard';
import { AccessLevel, PermissionArea } from './permissions';
import { MergeRouteConfig } from '../http/route-config';

/** Route belongs to the gateway family (X-Gateway-Authorization). */
export const GatewayAuth = () => applyDecorators(UseGuards(GatewayAuthGuard), ApiSecurity('gateway'));

/** Route belongs to the admin family (Admin-Auth). */
export const AdminAuth = () => applyDecorators(UseGuards(AdminAuthGuard), ApiSecurity('admin'));

/** Route belongs to the portal family (Authorization: <portal API token>). */
export const PortalAuth = () => applyDecorators(UseGuards(PortalAuthGuard), ApiSecurity('portal'));

/**
 * Route belongs to the dashboard family and needs `area` at `level` (write implies read; IsAdmin grants all). The
 * permission is in the route's Fastify config, so it is checked with the credential, before the body is read.
 */
export const DashboardAuth = (area?: PermissionArea, level: AccessLevel = 'read') =>
  applyDecorators(
    ...(area ? [MergeRouteConfig({ [DASHBOARD_PERMISSION_KEY]: { area, level } satisfies RequiredPermission })] : []),
    UseGuards(DashboardAuthGuard),
    ApiBearerAuth('dashboard'),
  );
