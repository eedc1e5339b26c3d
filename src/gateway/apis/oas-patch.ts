import {
  deepCopy,
  derefOrUndefined,
  ensureObject,
  EXTENSION,
  isObject,
  JsonObject,
  OasDocument,
  OperationEntry,
  operationIdOf,
  operationsOf,
} from './oas-document';
import { firstReasons } from '../../common/errors/reasons';
import { isRefusedMember } from '../../common/http/input-policy';
import { listenPathProblem, MAX_URL_LENGTH, upstreamUrlProblem } from './oas.validator';
import { codePointLength } from '../../common/http/max-length.decorator';

/** Query parameters of PATCH /gateway/apis/oas/{apiID} that configure the extension "in the manner of an import". */
export interface ImportParams {
  upstreamURL?: string;
  listenPath?: string;
  customDomain?: string;
  allowList?: boolean;
  validateRequest?: boolean;
  mockResponse?: boolean;
  authentication?: boolean;
}

export const IMPORT_STRING_PARAMS = ['upstreamURL', 'listenPath', 'customDomain'] as const;

/** A custom domain as the parameter takes it: a host name (wildcards and a port allowed), or empty for none. */
export const CUSTOM_DOMAIN = /^[A-Za-z0-9.*{}:_-]{0,253}$/;
export const IMPORT_BOOLEAN_PARAMS = ['allowList', 'validateRequest', 'mockResponse', 'authentication'] as const;

/** Query booleans: exactly true, false, 1 or 0 (as the parameters document them); anything else is not a boolean. */
export function parseBooleanParam(value: string): boolean | undefined {
  switch (value) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
    default:
      return undefined;
  }
}

/**
 * Reads the import parameters from a parsed query string. Returns the parameters, or the reasons
 * (each naming its parameter) why they cannot be used. Unknown parameters are ignored.
 */
export function parseImportParams(query: Record<string, unknown>): { params: ImportParams; errors: string[] } {
  const params: ImportParams = {};
  const errors: string[] = [];
  const single = (name: string): string | undefined => {
    const raw = query[name];
    if (raw === undefined) return undefined;
    if (typeof raw !== 'string') {
      errors.push(`${name} is given more than once`); // (the input policy refuses it before any route)
      return undefined;
    }
    return raw;
  };

  // the extension's own limit on upstream.url and listenPath.value, said of the query parameter that sets it
  const tooLong = (value: string) =>
    codePointLength(value) > MAX_URL_LENGTH ? `must be at most ${MAX_URL_LENGTH} characters` : undefined;
  const upstreamURL = single('upstreamURL');
  if (upstreamURL !== undefined) {
    const problem = tooLong(upstreamURL) ?? upstreamUrlProblem(upstreamURL);
    if (problem) errors.push(`query parameter upstreamURL ${problem}`);
    else params.upstreamURL = upstreamURL;
  }
  const listenPath = single('listenPath');
  if (listenPath !== undefined) {
    const problem =
      tooLong(listenPath) ??
      (listenPath.startsWith('/') ? listenPathProblem(listenPath) : 'must be a path starting with /');
    if (problem) errors.push(`query parameter listenPath ${problem}`);
    else params.listenPath = listenPath;
  }
  const customDomain = single('customDomain');
  if (customDomain !== undefined) {
    if (CUSTOM_DOMAIN.test(customDomain)) params.customDomain = customDomain;
    else errors.push(`query parameter customDomain must be a host name`);
  }
  for (const name of IMPORT_BOOLEAN_PARAMS) {
    const raw = single(name);
    if (raw === undefined) continue;
    const value = parseBooleanParam(raw);
    if (value === undefined) errors.push(`query parameter ${name} must be true, false, 1 or 0`);
    else params[name] = value;
  }
  return { params, errors };
}

/**
 * PATCH merge: the body replaces the stored document, except that a body without the
 * extension keeps the stored extension, and a body without `servers` keeps the stored servers.
 * A body extension without `info.orgId` keeps the stored organisation (an update never moves an API
 * between organisations by omission). Neither argument is modified.
 */
export function mergeForPatch(stored: OasDocument, body: OasDocument): OasDocument {
  const merged = deepCopy(body);
  if (!Object.prototype.hasOwnProperty.call(body, EXTENSION) && stored[EXTENSION] !== undefined) {
    merged[EXTENSION] = deepCopy(stored[EXTENSION]);
  }
  if (!Object.prototype.hasOwnProperty.call(body, 'servers') && stored.servers !== undefined) {
    merged.servers = deepCopy(stored.servers);
  }
  keepStoredOrg(stored, merged);
  return merged;
}

/** When `next`'s extension does not say which organisation the API belongs to, it stays where it was. */
export function keepStoredOrg(stored: OasDocument, next: OasDocument): void {
  const storedExt = stored[EXTENSION];
  const nextExt = next[EXTENSION];
  if (!isObject(storedExt) || !isObject(nextExt)) return;
  const storedOrg = isObject(storedExt.info) ? storedExt.info.orgId : undefined;
  if (typeof storedOrg !== 'string' || storedOrg === '') return;
  const info = isObject(nextExt.info) ? nextExt.info : undefined;
  if (info && info.orgId === undefined) info.orgId = storedOrg;
}

const PER_OPERATION_PARAMS = ['allowList', 'validateRequest', 'mockResponse'] as const;
type PerOperationParam = (typeof PER_OPERATION_PARAMS)[number];

/** The status the gateway answers a request that fails validation with, as the product's import sets it. */
const VALIDATION_ERROR_STATUS = 422;

/** The media types under which a request body counts as JSON, as the product's import looks them up. */
const JSON_MEDIA_KEYS = ['application/json', 'application/*', '*/*'];

const isNonEmptyArray = (value: unknown) => Array.isArray(value) && value.length > 0;

/** Whether an operation takes a JSON request body (refs followed). */
function hasJsonBody(doc: OasDocument, operation: JsonObject): boolean {
  const body = derefOrUndefined(doc, operation.requestBody);
  const content = isObject(body) ? body.content : undefined;
  return isObject(content) && JSON_MEDIA_KEYS.some((key) => Object.hasOwn(content, key) && content[key] != null);
}

/** Whether a response of an operation documents a body a mock can be made from: an example, examples or a schema. */
function hasResponseExample(doc: OasDocument, operation: JsonObject): boolean {
  const responses = operation.responses;
  if (!isObject(responses)) return false;
  return Object.values(responses).some((ref) => {
    const response = derefOrUndefined(doc, ref);
    const content = isObject(response) ? response.content : undefined;
    return (
      isObject(content) &&
      Object.values(content).some(
        (media) =>
          isObject(media) &&
          (media.example != null ||
            media.schema != null ||
            (isObject(media.examples) &&
              Object.values(media.examples).some((example) => derefOrUndefined(doc, example) != null))),
      )
    );
  });
}

/**
 * The operations a per-operation parameter configures, as the gateway product's import chooses them (its
 * documentation: allowList "for all endpoints", validateRequest "for all endpoints having a request body with media
 * type application/json", which its import widens to operations with parameters, their own or their path's;
 * mockResponse "for all endpoints having responses configured": with an example, examples or a schema).
 */
const CONFIGURES: Record<PerOperationParam, (doc: OasDocument, entry: OperationEntry) => boolean> = {
  allowList: () => true,
  validateRequest: (doc, { operation, item }) =>
    isNonEmptyArray(operation.parameters) || isNonEmptyArray(item.parameters) || hasJsonBody(doc, operation),
  mockResponse: (doc, { operation }) => hasResponseExample(doc, operation),
};

/** What each per-operation parameter writes into an operation's entry of `middleware.operations`. */
const WRITE: Record<PerOperationParam, (op: JsonObject, value: boolean) => void> = {
  allowList: (op, value) => {
    ensureObject(op, 'allow').enabled = value;
    // an allow list and a block list of one operation exclude each other
    if (value && isObject(op.block) && op.block.enabled === true) op.block.enabled = false;
  },
  validateRequest: (op, value) => {
    const validate = ensureObject(op, 'validateRequest');
    validate.enabled = value;
    validate.errorResponseCode = VALIDATION_ERROR_STATUS;
  },
  mockResponse: (op, value) => {
    ensureObject(op, 'mockResponse').enabled = value;
    (op.mockResponse as JsonObject).fromOASExamples = { enabled: value };
  },
};

/** The given per-operation parameters that configure `entry`. */
function paramsConfiguring(doc: OasDocument, params: ImportParams, entry: OperationEntry): PerOperationParam[] {
  return PER_OPERATION_PARAMS.filter((name) => params[name] !== undefined && CONFIGURES[name](doc, entry));
}

/**
 * Why the per-operation parameters cannot be applied to `doc`: a key of `middleware.operations` they would write
 * that a request body may not hold (`__proto__`, from an operationId), so the stored definition could never be sent
 * back as it is read. One reason per such operation, naming the parameters, the key and the operation.
 */
export function operationKeyErrors(doc: OasDocument, params: ImportParams): string[] {
  if (!PER_OPERATION_PARAMS.some((name) => params[name] !== undefined)) return [];
  const ext = doc[EXTENSION];
  const stored = isObject(ext) && isObject(ext.middleware) ? ext.middleware.operations : undefined;
  const errors: string[] = [];
  for (const entry of operationsOf(doc)) {
    const given = paramsConfiguring(doc, params, entry);
    if (!given.length) continue;
    const { path, method, operation } = entry;
    const key = operationIdOf(path, method, operation);
    const value = isObject(stored) && Object.hasOwn(stored, key) ? stored[key] : {};
    if (isRefusedMember(key, value))
      errors.push(
        `query parameter${given.length > 1 ? 's' : ''} ${given.join(', ')} would store ${EXTENSION}.middleware.operations.${key} for ` +
          `${method.toUpperCase()} ${path}, a member name a request body may not hold: give the operation another operationId`,
      );
  }
  return firstReasons(errors);
}

/**
 * Applies the import parameters to the document's extension (which must be an object; created if
 * missing). Booleans that configure operations are set under `middleware.operations.<operationId>` of the
 * operations of `paths` they apply to (CONFIGURES). Returns a new document.
 */
export function applyImportParams(doc: OasDocument, params: ImportParams): OasDocument {
  const out = deepCopy(doc);
  if (Object.keys(params).length === 0) return out;
  const ext = ensureObject(out, EXTENSION);
  if (params.upstreamURL !== undefined) ensureObject(ext, 'upstream').url = params.upstreamURL;
  if (params.listenPath !== undefined) ensureObject(ext, 'server', 'listenPath').value = params.listenPath;
  if (params.customDomain !== undefined) {
    const domain = ensureObject(ext, 'server', 'customDomain');
    domain.enabled = params.customDomain !== '';
    domain.name = params.customDomain;
  }
  if (params.authentication !== undefined)
    ensureObject(ext, 'server', 'authentication').enabled = params.authentication;

  for (const entry of operationsOf(out)) {
    const given = paramsConfiguring(out, params, entry);
    if (!given.length) continue;
    const op = ensureObject(ext, 'middleware', 'operations', operationIdOf(entry.path, entry.method, entry.operation));
    for (const name of given) WRITE[name](op, params[name]!);
  }
  return out;
}
