import { maxHeaderSize } from 'node:http';
import type { Type } from '@nestjs/common';
import { getSchemaPath, OpenAPIObject } from '@nestjs/swagger';
import type { ResponseObject } from '@nestjs/swagger';
import { GATEWAY_AUTH_MESSAGE } from '../auth/auth.guard';
import { MAX_INPUT_DEPTH, readsBody } from '../http/input-policy';
import { DashboardErrorBody, GatewayErrorBody, PlainErrorBody, PortalErrorBody } from './error-bodies';
import { Family, familyOf, validationStatus } from './families';
import { MAX_PARAM_LENGTH, REQUEST_TIMEOUT_MS } from './framework-errors';

/** The schemas of the families' error bodies, to be given to the document as extra models. */
export const ERROR_BODIES = [GatewayErrorBody, DashboardErrorBody, PortalErrorBody, PlainErrorBody];

type RouteFamily = Exclude<Family, 'other'>;

/** Each family's error body, and the status and reason of a missing or wrong credential (checked before anything). */
const FAMILIES: Record<RouteFamily, { body: Type; credential: [number, string] }> = {
  gateway: {
    body: GatewayErrorBody,
    credential: [403, `\`${GATEWAY_AUTH_MESSAGE}\`: X-Gateway-Authorization is missing or wrong`],
  },
  dashboard: { body: DashboardErrorBody, credential: [401, 'missing, wrong or inactive access key'] },
  admin: { body: DashboardErrorBody, credential: [401, 'missing or wrong Admin-Auth'] },
  portal: { body: PortalErrorBody, credential: [401, 'missing or wrong portal API token'] },
};

const INVALID_INPUT =
  'invalid input, every reason given: a path or query value the route refuses, a query parameter given twice, a ' +
  'query string with a malformed percent-escape or one that is not UTF-8, or text that cannot be stored (NUL, unpaired UTF-16 surrogates)';
const INVALID_BODY = `a body that is not JSON in UTF-8, is nested deeper than ${MAX_INPUT_DEPTH} levels, or that the route refuses`;
/** What the router and the HTTP parser refuse before any route is chosen: 400 in every family. */
const MALFORMED =
  'a malformed request: a percent-escape in the path that is not one, an HTTP/1.1 request without Host, or what ' +
  'cannot be parsed as HTTP';

/** `1 MiB`, `16 KiB` or a number of bytes. */
function size(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

const TOO_SLOW = `the request did not arrive in time: its headers within 60 s, all of it within ${REQUEST_TIMEOUT_MS / 1000} s`;

/**
 * Documents, on every operation of the four route families, what any of their routes can answer besides its own
 * errors: the credential failure, the validation status, 400 for a malformed request (the router and the HTTP parser
 * refuse it before any family's rules apply, so also on the portal, whose validation status is 422), 413 for a body
 * over `bodyLimit(path)` (where a body is read at all), 414 for an over-long path segment (where the path has a
 * parameter; elsewhere it names no route: 404), 408 for a request too slow to arrive, 431 for oversized headers and
 * 500. Every error answer of these operations then names its family's error body, the one the families' filter
 * renders. Descriptions the controllers gave are kept.
 */
export function documentErrorResponses(document: OpenAPIObject, bodyLimit: (path: string) => number): void {
  for (const [path, item] of Object.entries(document.paths)) {
    const family = familyOf(path);
    if (family === 'other') {
      documentPlainErrors(item);
      continue;
    }
    const { body, credential } = FAMILIES[family];
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      const responses = operation.responses as Record<string, ResponseObject>;
      const add = (status: number, description: string) => {
        if (!responses[status]?.description) responses[status] = { ...responses[status], description };
      };
      const takesBody = readsBody(method);
      add(...credential);
      const invalid = takesBody ? `${INVALID_INPUT}; or ${INVALID_BODY}` : INVALID_INPUT;
      if (validationStatus(family) === 400) add(400, `${invalid}; or ${MALFORMED}`);
      else add(validationStatus(family), invalid);
      add(400, MALFORMED);
      if (takesBody) add(413, `the body is over ${size(bodyLimit(path))}`);
      if (path.includes('{')) add(414, `a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
      add(408, TOO_SLOW);
      add(431, `the request line and headers are over ${size(maxHeaderSize)}`);
      add(500, 'an unexpected error: `Internal server error`, the details are logged only');
      addBusy(responses);
      for (const [status, response] of Object.entries(responses)) {
        if (/^[45]\d\d$/.test(status))
          response.content = { 'application/json': { schema: { $ref: getSchemaPath(body) } } };
      }
    }
  }
}

const BUSY =
  "the service is busy (every database connection stayed taken for the pool's whole wait), cannot reach its database " +
  'for the moment (PostgreSQL restarting or failing over), or a database statement ran past ' +
  'DATABASE_STATEMENT_TIMEOUT and was cancelled; what was not committed is not kept: send the request again after ' +
  'Retry-After';

/**
 * The 503 of an overloaded service (or one whose database is away), beside a route's own 503 where it has one; with
 * its Retry-After header.
 */
function addBusy(responses: Record<string, ResponseObject>): void {
  const own = responses[503];
  responses[503] = {
    ...own,
    description: own?.description ? `${own.description}; or ${BUSY}` : BUSY,
    headers: {
      'Retry-After': { description: 'seconds to wait before sending the request again', schema: { type: 'integer' } },
      ...own?.headers,
    },
  };
}

/**
 * Routes outside the families (health, metrics) take no credential or body, but the input policy and the HTTP layer
 * hold for them too: a query parameter given twice or text that cannot be stored, a malformed request, oversized
 * headers. They answer in the plain `{statusCode, message}` body.
 */
function documentPlainErrors(item: object): void {
  for (const operation of Object.values(item)) {
    if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
    const responses = operation.responses as Record<string, ResponseObject>;
    const content = { 'application/json': { schema: { $ref: getSchemaPath(PlainErrorBody) } } };
    responses[400] ??= { description: `${INVALID_INPUT}; or ${MALFORMED}`, content };
    responses[408] ??= { description: TOO_SLOW, content };
    responses[431] ??= { description: `the request line and headers are over ${size(maxHeaderSize)}`, content };
  }
}
