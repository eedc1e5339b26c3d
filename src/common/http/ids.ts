/**
 * The one id rule: an id in a path is exactly the characters the service issued, nothing else. No
 * surrounding spaces, signs, leading zeros, exponents or other spellings that a lenient parser (Number(),
 * PostgreSQL's own casts) would read as the same value, so one string never names a row by accident.
 */

const MAX_INT = 2_147_483_647;
const INTEGER_ID = /^[1-9][0-9]{0,9}$/;
/** UUIDs as issued: lower-case, hyphenated (PostgreSQL would also take upper case, braces or no hyphens). */
const UUID_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A positive 32-bit integer id written as its plain digits. */
export function isIntegerId(value: unknown): value is string {
  return typeof value === 'string' && INTEGER_ID.test(value) && Number(value) <= MAX_INT;
}

export function isUuidId(value: unknown): value is string {
  return typeof value === 'string' && UUID_ID.test(value);
}
