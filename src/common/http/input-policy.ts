import { isUtf8 } from 'node:buffer';
import type { FastifyBodyParser, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { ValidationFailed } from '../errors/api-error';
import { familyOf } from '../errors/families';
import { sendFamilyError } from '../errors/family-exception.filter';
import { countHeader } from './raw-headers';
import { MergeRouteConfig } from './route-config';

/** The largest request body a route takes (bootstrap's ROUTE_BODY_LIMITS lifts it for a few): 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * The deepest nesting of arrays and objects a request body may have. Real documents (OpenAPI
 * definitions included) stay far below it; beyond it the recursive validators and parsers further down
 * would exhaust the stack, so such a body is refused as invalid before any of them sees it.
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * The most members one object of a portal, dashboard or admin body may hold. Those bodies go through
 * class-transformer, which makes the keys of every object it copies unique with `indexOf` (quadratic in the
 * number of members): 115 000 members in a body under 1 MiB held the event loop for 43 s. No body of these
 * families needs more than a few dozen; the gateway family (OpenAPI documents with thousands of paths or
 * schemas) has no such limit, as no class-transformer pass reads its bodies.
 */
export const MAX_OBJECT_MEMBERS = 1000;

/** MAX_OBJECT_MEMBERS in the description of a free-form object in the OpenAPI document (maxProperties: its top). */
export const OBJECT_MEMBERS_NOTE = `this object, and each object inside it, holds at most ${MAX_OBJECT_MEMBERS} members`;

/**
 * A NUL character cannot be stored in a PostgreSQL text or jsonb value, and a lone UTF-16 surrogate has
 * no UTF-8 form: neither can be kept faithfully, so a string holding one is refused, naming the field.
 * (Without the `u` flag the pattern works on UTF-16 code units, which is what finds unpaired halves.)
 */
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired UTF-16 surrogates';

export function isStorableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/** A field name for messages: `Headers[0].Value`, `query.p`; keys that are themselves hostile are shown escaped. */
function child(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent || 'body'}[${key}]`;
  const shown = /^[\w$-]{1,64}$/.test(key) ? key : JSON.stringify(key.slice(0, 64)).replace(/[\ud800-\udfff]/g, '?');
  return parent ? `${parent}.${shown}` : shown;
}

/** What is wrong and where: the keys from the root down to the offending value. */
interface Violation {
  path: (string | number)[];
  problem: 'text' | 'key' | 'depth' | 'members';
}

/**
 * Finds the first value that breaks the policy. Recursion stops at MAX_INPUT_DEPTH, so hostile depth
 * cannot overflow this walk itself; the path is only put together for a value that fails, which keeps
 * the walk cheap on large valid bodies (10 000 analytics records).
 */
function findViolation(v: unknown, depth: number, maxMembers: number): Violation | undefined {
  if (typeof v === 'string') return UNSTORABLE.test(v) ? { path: [], problem: 'text' } : undefined;
  if (v === null || typeof v !== 'object') return undefined;
  if (depth >= MAX_INPUT_DEPTH) return { path: [], problem: 'depth' };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = findViolation(v[i], depth + 1, maxMembers);
      if (found) {
        found.path.unshift(i);
        return found;
      }
    }
    return undefined;
  }
  let members = 0;
  for (const key in v) {
    if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
    if (++members > maxMembers) return { path: [], problem: 'members' };
    if (UNSTORABLE.test(key)) return { path: [], problem: 'key' };
    const found = findViolation((v as Record<string, unknown>)[key], depth + 1, maxMembers);
    if (found) {
      found.path.unshift(key);
      return found;
    }
  }
  return undefined;
}

/** The first reason a parsed value breaks the input policy (naming the field under `root`), or undefined. */
export function inputViolation(value: unknown, root: string, maxMembers = Infinity): string | undefined {
  const found = findViolation(value, 0, maxMembers);
  if (!found) return undefined;
  if (found.problem === 'depth') return `${root || 'body'} is nested deeper than ${MAX_INPUT_DEPTH} levels`;
  const field = found.path.reduce<string>((p, k) => child(p, k), root) || 'body';
  if (found.problem === 'members') return `${field} has more than ${maxMembers} members`;
  return found.problem === 'key' ? `${field} has a member name that ${UNSTORABLE_TEXT}` : `${field} ${UNSTORABLE_TEXT}`;
}

/**
 * The words a route's refusals of its body's content start with, as its own validation words them
 * (`User object validation failed.`): a route sets it with BodyRefusalPrefix.
 */
interface InputPolicyRouteConfig {
  bodyRefusalPrefix?: string;
}

/** Starts the input policy's refusals of this route's body content (a NUL in a field, say) with `prefix`. */
export const BodyRefusalPrefix = (prefix: string) =>
  MergeRouteConfig({ bodyRefusalPrefix: prefix } satisfies InputPolicyRouteConfig);

/** `reason`, a refusal of the content of the request's body, worded as the route words its own. */
function bodyRefusal(request: Partial<Pick<FastifyRequest, 'routeOptions'>>, reason: string): string {
  const prefix = (request.routeOptions?.config as InputPolicyRouteConfig | undefined)?.bodyRefusalPrefix;
  return prefix ? `${prefix} ${reason}` : reason;
}

/** Checks path parameters, query values and the parsed body of a request against the input policy. */
export function requestInputViolation(
  request: Pick<FastifyRequest, 'params' | 'query' | 'body'> & Partial<Pick<FastifyRequest, 'routeOptions'>>,
  maxMembers = Infinity,
): string | undefined {
  const params = (request.params ?? {}) as Record<string, unknown>;
  for (const [name, v] of Object.entries(params)) {
    if (typeof v === 'string' && UNSTORABLE.test(v)) return `path parameter ${child('', name)} ${UNSTORABLE_TEXT}`;
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  for (const [name, v] of Object.entries(query)) {
    if (UNSTORABLE.test(name)) return `a query parameter name ${UNSTORABLE_TEXT}`;
    const reason = inputViolation(v, `query parameter ${child('', name)}`);
    if (reason) return reason;
  }
  const reason = request.body === undefined ? undefined : inputViolation(request.body, '', maxMembers);
  return reason && bodyRefusal(request, reason);
}

/**
 * Why a query that names a parameter more than once is refused, a reason per parameter: the parser makes an array of
 * the values, no route takes a list that way, and which of them would count?
 */
export function repeatedQueryParameters(query: unknown): string[] {
  if (query === null || typeof query !== 'object') return [];
  return Object.entries(query)
    .filter(([, v]) => Array.isArray(v))
    .map(([name]) => `${child('', name)} is given more than once`);
}

/** Whether a request carries a body: a Content-Length above 0, or Transfer-Encoding (HTTP/1.1 knows no other way). */
export function hasBody(headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Why a request body of one of the four families cannot be read as what the interface says every body is,
 * JSON in UTF-8, or undefined: it is sent with another media type (a form, text, XML, none at all), another
 * charset, or a content or transfer coding (compressed). A request without a body is never refused here.
 * `textIsJson` takes `text/plain` as JSON too (the gateway family: the gateway product's own tutorials send its JSON
 * that way).
 */
export function bodyEncodingViolation(
  headers: IncomingHttpHeaders,
  raw?: { rawHeaders: string[] },
  textIsJson = false,
): string | undefined {
  if (!hasBody(headers)) return undefined;
  // (the request itself, when given, tells two Content-Types apart: Node keeps only the first)
  if (raw && countHeader(raw.rawHeaders, 'content-type') > 1)
    return 'the body must be JSON: send one Content-Type: application/json';
  const coding = headers['content-encoding']?.trim().toLowerCase();
  if (coding && coding !== 'identity')
    return `Content-Encoding ${JSON.stringify(coding.slice(0, 64))} is not supported: send the body uncompressed`;
  // Node undoes only `chunked` (the last transfer coding, as HTTP/1.1 requires of a request): the bytes of any coding
  // before it (`gzip, chunked`) would reach the JSON parser as they are
  const transfer = headers['transfer-encoding']?.trim().toLowerCase();
  if (transfer && transfer !== 'chunked')
    return `Transfer-Encoding ${JSON.stringify(transfer.slice(0, 64))} is not supported: send the body uncompressed, chunked or with a Content-Length`;
  const [mediaType, ...parameters] = (headers['content-type'] ?? '').split(';');
  const media = mediaType.trim().toLowerCase();
  if (media !== 'application/json' && !(textIsJson && media === 'text/plain'))
    return 'the body must be JSON: send Content-Type: application/json';
  for (const parameter of parameters) {
    const [name, value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    if (!/^"?utf-8"?$/i.test(value.trim())) return 'the body must be JSON in UTF-8 (charset=utf-8, or no charset)';
  }
  return undefined;
}

/**
 * Why the query string of `url` cannot be read as sent: a percent-escape of bytes that are not UTF-8 (`%FF`),
 * which the query parser would read as U+FFFD, or a malformed one. (The router refuses such a path itself.)
 */
export function queryEncodingViolation(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0 || url.indexOf('%', q) < 0) return undefined;
  const query = url.slice(q + 1);
  if (/%(?![0-9A-Fa-f]{2})/.test(query)) return 'the query string holds a malformed percent-escape';
  try {
    decodeURIComponent(query);
    return undefined;
  } catch {
    return 'the query string holds a percent-escape that is not UTF-8';
  }
}

/**
 * The JSON body parser, but for bytes that are not UTF-8: decoded as they are, they would become U+FFFD and be
 * stored changed, so such a body is refused as the input policy refuses a string that cannot be stored.
 */
export function utf8JsonParser(fastify: FastifyInstance): FastifyBodyParser<Buffer> {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  return (request, body, done) => {
    if (!isUtf8(body)) {
      done(new ValidationFailed(['the body must be JSON in UTF-8: it holds bytes that are not UTF-8']), undefined);
      return;
    }
    void parse(request, body as unknown as string, (err, parsed) => {
      // the parser refuses valid JSON that holds a `__proto__` member, or a `constructor` one with a `prototype`,
      // with the same error as broken JSON: the caller is told which it was
      if (err && isValidJson(body))
        done(new ValidationFailed([bodyRefusal(request, PROTOTYPE_KEYS_REFUSED)]), undefined);
      else done(err, parsed);
    });
  };
}

/**
 * Whether the JSON body parser refuses a member `name` holding `value` (PROTOTYPE_KEYS_REFUSED): `__proto__`, or
 * `constructor` holding a member named `prototype`. What the service stores to be sent back must hold neither.
 */
export function isRefusedMember(name: string, value: unknown): boolean {
  if (name === '__proto__') return true;
  return name === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype');
}

const PROTOTYPE_KEYS_REFUSED =
  'the body must not hold a member named __proto__, nor a member named constructor that holds one named prototype';

function isValidJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

const BODILESS_METHODS = new Set(['GET', 'HEAD']);

/** Whether a request of `method` has its body read: no route of GET or HEAD takes one, so theirs never is. */
export function readsBody(method: string): boolean {
  return !BODILESS_METHODS.has(method.toUpperCase());
}

/**
 * One input policy for every route: before the body of a family's route is parsed, one that is not JSON in
 * UTF-8 (bodyEncodingViolation); after parsing and before any pipe, guard or handler sees the request, strings
 * that cannot be stored, bodies nested beyond MAX_INPUT_DEPTH and query parameters given more than once. Each is
 * refused with the family's validation status (400, portal 422) and body.
 */
export function registerInputPolicy(fastify: FastifyInstance): void {
  // after the credential check (onRequest): an anonymous caller still gets its 401/403 first. (Hooks on every
  // request take a callback rather than return a promise: one promise less per request; one that answers does not
  // call it.)
  fastify.addHook('preParsing', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    // the body of a GET or HEAD is never read (no route of these methods takes one), whatever its type or size
    const family = familyOf(request.url);
    const reason =
      family === 'other' || !readsBody(request.method)
        ? undefined
        : bodyEncodingViolation(request.headers, request.raw, family === 'gateway');
    if (reason) sendFamilyError(request, reply, new ValidationFailed([reason]));
    else done(null, payload);
  });
  fastify.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done) => {
    const maxMembers = familyOf(request.url) === 'gateway' ? Infinity : MAX_OBJECT_MEMBERS;
    const reason = queryEncodingViolation(request.url) ?? requestInputViolation(request, maxMembers);
    const reasons = reason ? [reason] : repeatedQueryParameters(request.query);
    if (reasons.length) sendFamilyError(request, reply, new ValidationFailed(reasons));
    else done();
  });
}
