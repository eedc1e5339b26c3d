import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
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

/** Route belongs to the gateway family (X-Gateway-Authorization). */
export const GatewayAuth = () => applyDecorators(UseGuards(GatewayAuthGuard), ApiSecurity('gateway'));

/** Route belongs to the admin family (Admin-Auth). */
export const AdminAuth = () => applyDecorators(UseGuards(AdminAuthGuard), ApiSecurity('admin'));

/** Route belongs to the portal family (Authorization: <portal API token>). */
export const PortalAuth = () => applyDecorators(UseGuards(PortalAuthGuard), ApiSecurity('portal'));

/** Route belongs to the dashboard family and needs `area` at `level` (write implies read; IsAdmin grants all). */
export const DashboardAuth = (area?: PermissionArea, level: AccessLevel = 'read') =>
  applyDecorators(
    SetMetadata(DASHBOARD_PERMISSION_KEY, area ? ({ area, level } satisfies RequiredPermission) : undefined),
    UseGuards(DashboardAuthGuard),
    ApiBearerAuth('dashboard'),
  );
