export const PERMISSION_AREAS = [
  'analytics',
  'api_assets',
  'apis',
  'certs',
  'hooks',
  'idm',
  'keys',
  'log',
  'oauth',
  'policies',
  'portal',
  'system',
  'user_groups',
  'users',
  'websockets',
] as const;
export type PermissionArea = (typeof PERMISSION_AREAS)[number];
export type AccessLevel = 'read' | 'write';
/** The levels an area of user_permissions takes. */
export const AREA_LEVELS: readonly string[] = ['read', 'write', 'deny'];
/** The administrative flags of user_permissions, and the levels they take instead of the areas'. */
export const ADMIN_FLAGS: readonly string[] = ['IsAdmin', 'ResetPassword'];
export const ADMIN_LEVELS: readonly string[] = ['admin', 'deny'];

/** Write implies read; deny and absence grant nothing; IsAdmin "admin" grants everything. */
export function hasPermission(
  permissions: Record<string, string> | null | undefined,
  area: PermissionArea,
  level: AccessLevel,
): boolean {
  if (!permissions) return false;
  if (permissions.IsAdmin === 'admin') return true;
  const granted = permissions[area];
  if (granted === 'write') return true;
  if (granted === 'read') return level === 'read';
  return false;
}
