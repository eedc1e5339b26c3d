/** The gateway extension member (`x-gateway-api-gateway`) of an OAS API definition. */
export const EXTENSION = 'x-gateway-api-gateway';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** An OpenAPI 3 document as stored: plain JSON, with the gateway extension under EXTENSION. */
export type OasDocument = JsonObject;

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads a nested member, or undefined when any step is missing or not an object. */
export function pick(root: unknown, ...path: string[]): Json | undefined {
  let cur: unknown = root;
  for (const key of path) {
    if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur as Json;
}

/** The object at `path` under `root`, created (replacing non-objects) as needed. */
export function ensureObject(root: JsonObject, ...path: string[]): JsonObject {
  let cur = root;
  for (const key of path) {
    // own properties only, defined rather than assigned: a key like "__proto__" stays plain data
    const next = Object.prototype.hasOwnProperty.call(cur, key) ? cur[key] : undefined;
    if (!isObject(next))
      Object.defineProperty(cur, key, { value: {}, writable: true, enumerable: true, configurable: true });
    cur = cur[key] as JsonObject;
  }
  return cur;
}

export function extensionOf(doc: OasDocument): JsonObject | undefined {
  const ext = doc[EXTENSION];
  return isObject(ext) ? ext : undefined;
}

export function deepCopy<T>(value: T): T {
  return structuredClone(value);
}

/** The id an operation is known by in the extension: its operationId, else path without the leading slash + METHOD. */
export function operationIdOf(path: string, method: string, operation: JsonObject): string {
  const given = operation.operationId;
  return typeof given === 'string' && given !== '' ? given : `${path.replace(/^\//, '')}${method.toUpperCase()}`;
}

/** One operation of a document: its path, its method, itself and the path item holding it. */
export interface OperationEntry {
  path: string;
  method: string;
  operation: JsonObject;
  item: JsonObject;
}

/** Every operation of the document's paths, in document order. */
export function operationsOf(doc: OasDocument): OperationEntry[] {
  const out: OperationEntry[] = [];
  const paths = doc.paths;
  if (!isObject(paths)) return out;
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (isObject(operation)) out.push({ path, method, operation, item });
    }
  }
  return out;
}

/** The value at a JSON pointer (`/components/securitySchemes/j`) in `root`, or undefined when there is none. */
function atPointer(root: Json, pointer: string): Json | undefined {
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let cur: Json | undefined = root;
  for (const token of pointer.slice(1).split('/')) {
    const key = token.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) cur = /^(0|[1-9]\d*)$/.test(key) ? cur[Number(key)] : undefined;
    else if (isObject(cur) && Object.hasOwn(cur, key)) cur = cur[key];
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/**
 * What `value` stands for in `doc`: itself, or if it is a `$ref` (`{"$ref": "#/components/securitySchemes/j"}`),
 * what the ref points at in the document, following refs to refs. A ref outside the document (never read), to
 * nothing, or leading back to one already followed gives the reason instead.
 */
export function resolveRef(doc: OasDocument, value: Json | undefined): { value: Json | undefined } | { error: string } {
  const followed = new Set<string>();
  let cur = value;
  while (isObject(cur) && typeof cur.$ref === 'string') {
    const ref = cur.$ref;
    if (followed.has(ref)) return { error: `its $refs lead in a circle back to ${ref}` };
    followed.add(ref);
    if (!ref.startsWith('#')) return { error: `its $ref ${ref} is outside the document, which is never read` };
    let pointer: string;
    try {
      // a fragment: percent-escaped, then the pointer's own ~0 and ~1
      pointer = decodeURIComponent(ref.slice(1));
    } catch {
      return { error: `its $ref ${ref} is not a valid URI fragment` };
    }
    cur = atPointer(doc, pointer);
    if (cur === undefined) return { error: `its $ref ${ref} points at nothing in the document` };
  }
  return { value: cur };
}

/** What `value` stands for in `doc` (refs followed), or undefined when a ref of it leads nowhere. */
export function derefOrUndefined(doc: OasDocument, value: Json | undefined): Json | undefined {
  const resolved = resolveRef(doc, value);
  return 'value' in resolved ? resolved.value : undefined;
}
