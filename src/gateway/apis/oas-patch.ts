import {
  deepCopy,
  ensureObject,
  EXTENSION,
  isObject,
  JsonObject,
  OasDocument,
  operationIdOf,
  operationsOf,
} from './oas-document';
import { isAbsoluteHttpUrl } from './oas.validator';

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
export const IMPORT_BOOLEAN_PARAMS = ['allowList', 'validateRequest', 'mockResponse', 'authentication'] as const;

/** Query booleans: true/false/1/0 (case-insensitive); anything else is not a boolean. */
export function parseBooleanParam(value: string): boolean | undefined {
  switch (value.trim().toLowerCase()) {
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
      errors.push(`query parameter ${name} must be given once`);
      return undefined;
    }
    return raw;
  };

  const upstreamURL = single('upstreamURL');
  if (upstreamURL !== undefined) {
    if (isAbsoluteHttpUrl(upstreamURL)) params.upstreamURL = upstreamURL;
    else errors.push(`query parameter upstreamURL must be an absolute http(s) URL`);
  }
  const listenPath = single('listenPath');
  if (listenPath !== undefined) {
    if (listenPath.startsWith('/') && !/\s/.test(listenPath)) params.listenPath = listenPath;
    else errors.push(`query parameter listenPath must be a path starting with /`);
  }
  const customDomain = single('customDomain');
  if (customDomain !== undefined) {
    if (/^[A-Za-z0-9.*{}:_-]{0,253}$/.test(customDomain)) params.customDomain = customDomain;
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

/**
 * Applies the import parameters to the document's extension (which must be an object; created if
 * missing). Booleans that configure operations are set on every operation of `paths`, under
 * `middleware.operations.<operationId>`. Returns a new document.
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

  const perOperation: [keyof ImportParams, (op: JsonObject, value: boolean) => void][] = [
    ['allowList', (op, value) => (ensureObject(op, 'allow').enabled = value)],
    ['validateRequest', (op, value) => (ensureObject(op, 'validateRequest').enabled = value)],
    [
      'mockResponse',
      (op, value) => {
        const mock = ensureObject(op, 'mockResponse');
        mock.enabled = value;
        ensureObject(mock, 'fromOASExamples').enabled = value;
      },
    ],
  ];
  for (const [name, set] of perOperation) {
    const value = params[name];
    if (typeof value !== 'boolean') continue;
    for (const { path, method, operation } of operationsOf(out)) {
      set(ensureObject(ext, 'middleware', 'operations', operationIdOf(path, method, operation)), value);
    }
  }
  return out;
}
