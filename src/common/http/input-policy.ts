import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationFailed } from '../errors/api-error';
import { sendFamilyError } from '../errors/family-exception.filter';

/**
 * The deepest nesting of arrays and objects a request body may have. Real documents (OpenAPI
 * definitions included) stay far below it; beyond it the recursive validators and parsers further down
 * would exhaust the stack, so such a body is refused as invalid before any of them sees it.
 */
export const MAX_INPUT_DEPTH = 64;

/**
 * A NUL character cannot be stored in a PostgreSQL text or jsonb value, and a lone UTF-16 surrogate has
 * no UTF-8 form: neither can be kept faithfully, so a string holding one is refused, naming the field.
 * (Without the `u` flag the pattern works on UTF-16 code units, which is what finds unpaired halves.)
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_TEXT = 'must not contain NUL characters or unpaired UTF-16 surrogates';

export function isStorableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/** A field name for messages: `Headers[0].Value`, `query.p`; keys that are themselves hostile are shown escaped. */
function child(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const shown = /^[\w$-]{1,64}$/.test(key) ? key : JSON.stringify(key.slice(0, 64)).replace(/[\ud800-\udfff]/g, '?');
  return parent ? `${parent}.${shown}` : shown;
}

/**
 * Walks a parsed value without recursion (so hostile depth cannot overflow the walk itself) and returns
 * the first reason it breaks the input policy, or undefined when it keeps to it.
 */
export function inputViolation(value: unknown, root: string): string | undefined {
  const stack: Array<{ v: unknown; path: string; depth: number }> = [{ v: value, path: root, depth: 0 }];
  while (stack.length) {
    const { v, path, depth } = stack.pop()!;
    if (typeof v === 'string') {
      if (UNSTORABLE.test(v)) return `${path || 'body'} ${UNSTORABLE_TEXT}`;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return `${root || 'body'} is nested deeper than ${MAX_INPUT_DEPTH} levels`;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: child(path, i), depth: depth + 1 });
      continue;
    }
    for (const key of Object.keys(v)) {
      if (UNSTORABLE.test(key)) return `${path || 'body'} has a member name that ${UNSTORABLE_TEXT}`;
      stack.push({ v: (v as Record<string, unknown>)[key], path: child(path, key), depth: depth + 1 });
    }
  }
  return undefined;
}

/** Checks path parameters, query values and the parsed body of a request against the input policy. */
export function requestInputViolation(request: Pick<FastifyRequest, 'params' | 'query' | 'body'>): string | undefined {
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
  return request.body === undefined ? undefined : inputViolation(request.body, '');
}

/**
 * One input policy for every route: after parsing and before any pipe, guard or handler sees the
 * request, strings that cannot be stored and bodies nested beyond MAX_INPUT_DEPTH are refused with the
 * family's validation status (400, portal 422) and body.
 */
export function registerInputPolicy(fastify: FastifyInstance): void {
  fastify.addHook('preValidation', async (request: FastifyRequest, reply: FastifyReply) => {
    const reason = requestInputViolation(request);
    if (!reason) return;
    sendFamilyError(request, reply, new ValidationFailed([reason]));
    return reply;
  });
}
