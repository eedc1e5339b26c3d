import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { ADMIN_FLAGS, ADMIN_LEVELS, AREA_LEVELS, PERMISSION_AREAS } from '../../common/auth';
import { printableTextMessage, printableTextRefusal } from '../../common/http/required-text.decorator';
import { CreateUserDto } from './dto/create-user.dto';

export const ADMIN_DEFAULT_PERMISSIONS = { IsAdmin: 'admin', ResetPassword: 'admin' };

function reasonsOf(errors: ValidationError[]): string[] {
  return errors.flatMap((e) => Object.values(e.constraints ?? {}));
}

/** Every reason a user_permissions map is not one (unknown area, or a level the area does not take). */
export function permissionErrors(permissions: Record<string, unknown>): string[] {
  const errors: string[] = [];
  for (const [area, level] of Object.entries(permissions)) {
    if (ADMIN_FLAGS.includes(area)) {
      if (typeof level !== 'string' || !ADMIN_LEVELS.includes(level))
        errors.push(`user_permissions.${area} must be one of ${ADMIN_LEVELS.join(', ')}`);
    } else if (!(PERMISSION_AREAS as readonly string[]).includes(area)) {
      errors.push(
        `user_permissions.${area} is not a permission area (one of ${[...PERMISSION_AREAS, ...ADMIN_FLAGS].join(', ')})`,
      );
    } else if (typeof level !== 'string' || !AREA_LEVELS.includes(level)) {
      errors.push(`user_permissions.${area} must be one of ${AREA_LEVELS.join(', ')}`);
    }
  }
  return errors;
}

/**
 * Validates a user creation body. Returns the input, or every reason it is not one; the caller turns
 * reasons into `User object validation failed. ...`. Unknown and read-only members are dropped.
 */
export function parseUserInput(
  body: unknown,
  opts: { permissionsRequired: boolean },
): { input?: CreateUserDto; errors: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { errors: ['the body must be a JSON object'] };
  // objects and arrays are taken as sent (the two free-form maps, and any value of the wrong type): class-transformer
  // rebuilds nested objects through their prototype, so a member named `constructor` would throw (a 500 for
  // `"password": {"constructor": 1}`) and one named `toString` or `valueOf` would vanish. No field is a nested DTO.
  const members = Object.entries(body as Record<string, unknown>);
  const isObject = (value: unknown) => typeof value === 'object' && value !== null;
  const plain = Object.fromEntries(members.filter(([, value]) => !isObject(value)));
  const dto = plainToInstance(CreateUserDto, plain, { enableImplicitConversion: false });
  // (a member named like one of Object's, `constructor` above all, is no field: set on the DTO, it would hide the
  // class its rules are found by)
  for (const [name, value] of members)
    if (isObject(value) && !(name in Object.prototype)) Object.assign(dto, { [name]: value });
  const errors = reasonsOf(validateSync(dto, { whitelist: true, stopAtFirstError: true, forbidUnknownValues: false }));
  // a name is one line of text that shows something, as the portal's names are
  for (const field of ['first_name', 'last_name'] as const) {
    const refusal = errors.some((e) => e.startsWith(`${field} `)) ? null : printableTextRefusal(dto[field]);
    if (refusal) errors.push(printableTextMessage(field, refusal));
  }
  // IsOptional lets null through: an explicit null counts as absent everywhere below
  for (const key of Object.keys(dto) as (keyof CreateUserDto)[]) if (dto[key] === null) delete dto[key];
  if (dto.user_permissions === undefined) {
    if (opts.permissionsRequired) errors.push('user_permissions is required');
  } else if (
    typeof dto.user_permissions === 'object' &&
    dto.user_permissions !== null &&
    !Array.isArray(dto.user_permissions)
  ) {
    errors.push(...permissionErrors(dto.user_permissions));
  }
  return errors.length ? { errors } : { input: dto, errors };
}

const RANK: Record<string, number> = { write: 2, read: 1 };

/**
 * What `requested` grants beyond `caller` (both user_permissions maps): an IsAdmin caller may grant
 * anything; anyone else neither the admin flags nor an area above their own level. Empty: all fine.
 */
export function beyondCaller(caller: Record<string, string>, requested: Record<string, string>): string[] {
  if (caller.IsAdmin === 'admin') return [];
  const beyond: string[] = [];
  for (const [area, level] of Object.entries(requested)) {
    if (ADMIN_FLAGS.includes(area)) {
      if (level === 'admin') beyond.push(area);
    } else if ((RANK[level] ?? 0) > (RANK[caller[area]] ?? 0)) {
      beyond.push(`${area}:${level}`);
    }
  }
  return beyond;
}
