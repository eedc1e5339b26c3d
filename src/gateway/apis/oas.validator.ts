import { validate } from '@readme/openapi-parser';
import { firstReasons, MAX_REASONS } from '../../common/errors/reasons';
import { codePointLength } from '../../common/http/max-length.decorator';
import { bmpCharacterClass } from '../../common/http/pattern';
import { EXTENSION, isObject, Json, resolveRef } from './oas-document';
import { locateErrors } from './oas-error-location';
import { manySchemaErrors, reuseCompiledSchemas } from './oas-schema-errors';

/** API ids: given in `info.id` or generated (32 hex). */
export const API_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const VERSION_LOCATIONS = ['header', 'url-param', 'url'];

/** The validator's reason without the code frame it appends after a blank line. */
function firstLine(message: string): string {
  return message.split('\n\n')[0].split('\n')[0].trim();
}

/**
 * Checks that `body` is an OpenAPI 3 document with a real validator. Returns the reasons it is not
 * ([] when it is). External `$ref`s are never fetched (no network, no files): only the document counts.
 * The parser dereferences `body` in place: it must be a document of its own (the validation thread's structured
 * clone of the request's, see OasValidationPool).
 */
export async function validateOpenApi(body: unknown): Promise<string[]> {
  if (!isObject(body)) return ['the body is not an OpenAPI 3 document: expected a JSON object'];
  if (typeof body.openapi !== 'string' || !/^3\.\d+(\.\d+)?$/.test(body.openapi)) {
    return ['the body is not an OpenAPI 3 document: `openapi` must be a version string 3.x.y'];
  }
  // read as sent, before the parser dereferences it
  const undeclared = undeclaredSchemes(body);
  try {
    // the parser would print every one of many schema errors, at the document's size each: only those told are
    const many = await manySchemaErrors(body, MAX_REASONS);
    if (many) return firstReasons(locateErrors(many.messages, many.doc), many.more);
    reuseCompiledSchemas();
    const result = await validate(body as never, {
      resolve: { external: false, file: false },
      timeoutMs: 5000,
    });
    if (result.valid) return firstReasons(undeclared);
    // the parser has dereferenced `body` in place: its messages' code frames print that document
    const reasons = locateErrors(
      result.errors.map((e) => e.message),
      body,
    ).filter((m) => m !== '');
    return reasons.length ? firstReasons(reasons, result.additionalErrors) : ['invalid OpenAPI document'];
  } catch (err) {
    return [`invalid OpenAPI document: ${firstLine(err instanceof Error ? err.message : String(err))}`];
  }
}

const OPERATIONS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/**
 * Security requirements naming a scheme that `components.securitySchemes` does not declare, which OpenAPI forbids
 * ("each name MUST correspond to a security scheme which is declared") and the parser does not check: the API would
 * otherwise be listed as keyless. Top level and each operation. A scheme declared as a `$ref` must lead to one in
 * the document: the parser takes one that refers to itself, and one outside the document is never read.
 */
function undeclaredSchemes(doc: { [k: string]: Json }): string[] {
  const declared =
    isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
  const reasons: string[] = [];
  for (const [name, scheme] of Object.entries(declared)) {
    const resolved = resolveRef(doc, scheme);
    if ('error' in resolved) reasons.push(`components.securitySchemes.${name}: ${resolved.error}`);
  }
  const check = (security: Json | undefined, at: string) => {
    if (!Array.isArray(security)) return;
    security.forEach((requirement, i) => {
      if (!isObject(requirement)) return;
      for (const name of Object.keys(requirement))
        if (!Object.hasOwn(declared, name))
          reasons.push(
            `${at}[${i}] requires the security scheme ${name}, which components.securitySchemes does not declare`,
          );
    });
  };
  check(doc.security, 'security');
  if (isObject(doc.paths))
    for (const [path, item] of Object.entries(doc.paths))
      if (isObject(item))
        for (const method of OPERATIONS) {
          const op = item[method];
          if (isObject(op)) check(op.security, `paths.${path}.${method}.security`);
        }
  return reasons;
}

// C0 controls and DEL: no part of a name, path, host or URL; CR and LF would end a header line the gateway writes
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const BLANK_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;
const NO_CONTROL = 'must not contain control characters';
const NO_BLANK_OR_CONTROL = 'must not contain whitespace or control characters';

/** Why `value` cannot be an upstream URL (extension `upstream.url`, parameter `upstreamURL`), or undefined. */
export function upstreamUrlProblem(value: string): string | undefined {
  // the URL parser would drop a CR or LF, but the string is stored as sent
  if (BLANK_OR_CONTROL.test(value)) return NO_BLANK_OR_CONTROL;
  return isAbsoluteHttpUrl(value) ? undefined : 'must be an absolute http(s) URL';
}

/** What a listen path may be (starts with `/`, no whitespace or control characters), as an OpenAPI pattern. */
export const LISTEN_PATH_PATTERN = `^/[^${bmpCharacterClass(BLANK_OR_CONTROL)}]*$`;

/** Why `value`, starting with `/`, cannot be a listen path (`server.listenPath.value`, `listenPath`), or undefined. */
export function listenPathProblem(value: string): string | undefined {
  return BLANK_OR_CONTROL.test(value) ? NO_BLANK_OR_CONTROL : undefined;
}

/** The longest upstream.url and server.listenPath.value, in characters (code points). */
export const MAX_URL_LENGTH = 2048;

function checkString(
  errors: string[],
  value: Json | undefined,
  path: string,
  opts: { required?: boolean; nonEmpty?: boolean; max?: number; noControl?: boolean } = {},
): void {
  if (value === undefined) {
    if (opts.required) errors.push(`${path} is required`);
    return;
  }
  if (typeof value !== 'string') errors.push(`${path} must be a string`);
  else if (opts.nonEmpty && value.trim() === '') errors.push(`${path} must not be empty`);
  else if (opts.max && codePointLength(value) > opts.max) errors.push(`${path} must be at most ${opts.max} characters`);
  else if (opts.noControl && CONTROL.test(value)) errors.push(`${path} ${NO_CONTROL}`);
}

function checkBoolean(errors: string[], value: Json | undefined, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') errors.push(`${path} must be a boolean`);
}

function checkObject(errors: string[], value: Json | undefined, path: string): value is { [k: string]: Json } {
  if (value === undefined) return false;
  if (!isObject(value)) {
    errors.push(`${path} must be an object`);
    return false;
  }
  return true;
}

function isAbsoluteHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Validates the members of the gateway extension this service reads (name, id, orgId, categories, state,
 * versioning, listen path, custom domain, authentication, upstream);
 * other members are kept as given. Returns every reason at once.
 */
export function validateExtension(ext: Json | undefined): string[] {
  const errors: string[] = [];
  const p = EXTENSION;
  if (ext === undefined) return [`${p} is required`];
  if (!isObject(ext)) return [`${p} must be an object`];

  if (ext.info === undefined) errors.push(`${p}.info is required`);
  if (checkObject(errors, ext.info, `${p}.info`)) {
    const info = ext.info;
    checkString(errors, info.name, `${p}.info.name`, { required: true, nonEmpty: true, max: 512, noControl: true });
    if (info.id !== undefined && (typeof info.id !== 'string' || !API_ID_PATTERN.test(info.id))) {
      errors.push(`${p}.info.id must be 1-128 letters, digits, '.', '_' or '-'`);
    }
    checkString(errors, info.orgId, `${p}.info.orgId`, { max: 128, noControl: true });
    if (info.categories !== undefined) {
      if (
        !Array.isArray(info.categories) ||
        info.categories.some((c) => typeof c !== 'string' || c.trim() === '' || c.length > 256)
      ) {
        errors.push(`${p}.info.categories must be an array of non-empty strings`);
      } else if (info.categories.some((c) => String(c).includes(','))) {
        // the list's category filter takes names separated by commas: one holding a comma could never be found
        errors.push(
          `${p}.info.categories must not contain a comma (GET /api/apis?category= separates names by commas)`,
        );
      } else if (info.categories.some((c) => CONTROL.test(String(c)))) {
        errors.push(`${p}.info.categories ${NO_CONTROL}`);
      }
    }
    if (checkObject(errors, info.state, `${p}.info.state`))
      checkBoolean(errors, info.state.active, `${p}.info.state.active`);
    if (checkObject(errors, info.versioning, `${p}.info.versioning`)) {
      const v = info.versioning;
      checkBoolean(errors, v.enabled, `${p}.info.versioning.enabled`);
      checkString(errors, v.name, `${p}.info.versioning.name`, { max: 256 });
      checkString(errors, v.key, `${p}.info.versioning.key`, { max: 256 });
      if (v.location !== undefined && (typeof v.location !== 'string' || !VERSION_LOCATIONS.includes(v.location))) {
        errors.push(`${p}.info.versioning.location must be one of ${VERSION_LOCATIONS.join(', ')}`);
      }
      if (v.versions !== undefined) {
        const ok =
          Array.isArray(v.versions) &&
          v.versions.every((x) => isObject(x) && typeof x.name === 'string' && typeof x.id === 'string');
        if (!ok) errors.push(`${p}.info.versioning.versions must be an array of {name, id} strings`);
      }
    }
  }

  if (checkObject(errors, ext.server, `${p}.server`)) {
    const server = ext.server;
    if (checkObject(errors, server.listenPath, `${p}.server.listenPath`)) {
      const lp = server.listenPath;
      checkString(errors, lp.value, `${p}.server.listenPath.value`, { max: MAX_URL_LENGTH });
      if (typeof lp.value === 'string' && codePointLength(lp.value) <= MAX_URL_LENGTH) {
        const problem = lp.value.startsWith('/') ? listenPathProblem(lp.value) : 'must start with /';
        if (problem) errors.push(`${p}.server.listenPath.value ${problem}`);
      }
      checkBoolean(errors, lp.strip, `${p}.server.listenPath.strip`);
    }
    if (checkObject(errors, server.customDomain, `${p}.server.customDomain`)) {
      checkBoolean(errors, server.customDomain.enabled, `${p}.server.customDomain.enabled`);
      checkString(errors, server.customDomain.name, `${p}.server.customDomain.name`, { max: 253, noControl: true });
    }
    if (checkObject(errors, server.authentication, `${p}.server.authentication`)) {
      checkBoolean(errors, server.authentication.enabled, `${p}.server.authentication.enabled`);
    }
  }

  if (checkObject(errors, ext.upstream, `${p}.upstream`)) {
    const url = ext.upstream.url;
    checkString(errors, url, `${p}.upstream.url`, { max: MAX_URL_LENGTH });
    const problem =
      typeof url === 'string' && codePointLength(url) <= MAX_URL_LENGTH ? upstreamUrlProblem(url) : undefined;
    if (problem) errors.push(`${p}.upstream.url ${problem}`);
  }
  return errors;
}
