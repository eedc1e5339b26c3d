import { extensionOf, isObject, Json, JsonObject, OasDocument, pick, resolveRef } from './oas-document';

export const AUTH_TYPES = ['keyless', 'authToken', 'oauth', 'jwt', 'basic'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

export const API_TYPES = ['tcp', 'rest', 'graphql', 'udg', 'subgraph', 'supergraph', 'internal'] as const;
export type ApiType = (typeof API_TYPES)[number];

/**
 * `api_definition` of a managed API list entry, as the gateway product lists it, plus the additive `active` and
 * `use_keyless`.
 */
export interface ApiListEntry {
  api_id: string;
  name: string;
  org_id: string;
  active: boolean;
  use_keyless: boolean;
  use_oauth2: boolean;
  auth: { auth_header_name: string };
  definition: { key: string; location: string };
  proxy: { listen_path: string; strip_listen_path: boolean; target_url: string };
  version_data: { not_versioned: boolean; versions: Record<string, { name: string }> };
}

/** What is stored next to the document so the dashboard can filter, sort and page in SQL. */
export interface DefinitionColumns {
  orgId: string;
  name: string;
  apiType: ApiType;
  categories: string[];
  authTypes: AuthType[];
  /** ids of the child versions this (base) definition lists. */
  childIds: string[];
  entry: ApiListEntry;
}

const str = (v: Json | undefined, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const bool = (v: Json | undefined, fallback: boolean): boolean => (typeof v === 'boolean' ? v : fallback);

function securitySchemes(doc: OasDocument): JsonObject {
  const schemes = pick(doc, 'components', 'securitySchemes');
  return isObject(schemes) ? schemes : {};
}

/** A declared scheme, its local `$ref` followed (`{"$ref": "#/components/securitySchemes/j"}` is scheme j). */
function schemeObject(doc: OasDocument, declared: Json | undefined): JsonObject | undefined {
  const resolved = resolveRef(doc, declared);
  return 'value' in resolved && isObject(resolved.value) ? resolved.value : undefined;
}

/** Names of the schemes the document's top-level `security` requires (any alternative). */
function requiredSchemeNames(doc: OasDocument): string[] {
  const security = doc.security;
  if (!Array.isArray(security)) return [];
  const names = new Set<string>();
  for (const requirement of security)
    if (isObject(requirement)) for (const name of Object.keys(requirement)) names.add(name);
  return [...names];
}

function authTypeOf(scheme: JsonObject): AuthType | undefined {
  const type = str(scheme.type);
  if (type === 'apiKey') return 'authToken';
  if (type === 'oauth2') return 'oauth';
  if (type === 'openIdConnect') return 'jwt';
  if (type === 'http') {
    const httpScheme = str(scheme.scheme).toLowerCase();
    if (httpScheme === 'basic') return 'basic';
    if (httpScheme === 'bearer') return str(scheme.bearerFormat).toUpperCase() === 'JWT' ? 'jwt' : 'authToken';
  }
  return undefined;
}

/**
 * The header of the first apiKey scheme (in declaration order) that is sent in a header;
 * `Authorization` when there is none.
 */
export function authHeaderName(doc: OasDocument): string {
  for (const declared of Object.values(securitySchemes(doc))) {
    const scheme = schemeObject(doc, declared);
    if (
      scheme &&
      scheme.type === 'apiKey' &&
      scheme.in === 'header' &&
      typeof scheme.name === 'string' &&
      scheme.name !== ''
    )
      return scheme.name;
  }
  return 'Authorization';
}

/**
 * Authentication types of a definition: those of the schemes its top-level `security` requires;
 * `keyless` when it requires none, or when the extension turns authentication off explicitly
 * (`server.authentication.enabled: false`).
 */
export function authTypesOf(doc: OasDocument): AuthType[] {
  if (pick(extensionOf(doc), 'server', 'authentication', 'enabled') === false) return ['keyless'];
  const schemes = securitySchemes(doc);
  const types = new Set<AuthType>();
  for (const name of requiredSchemeNames(doc)) {
    const scheme = Object.hasOwn(schemes, name) ? schemeObject(doc, schemes[name]) : undefined;
    const type = scheme ? authTypeOf(scheme) : undefined;
    if (type) types.add(type);
  }
  return types.size ? AUTH_TYPES.filter((t) => types.has(t)) : ['keyless'];
}

function categoriesOf(ext: JsonObject | undefined): string[] {
  const given = pick(ext, 'info', 'categories');
  if (!Array.isArray(given)) return [];
  const out: string[] = [];
  for (const c of given) if (typeof c === 'string' && c.trim() !== '' && !out.includes(c.trim())) out.push(c.trim());
  return out;
}

function versionDataOf(ext: JsonObject | undefined): {
  childIds: string[];
  versionData: ApiListEntry['version_data'];
  definition: ApiListEntry['definition'];
} {
  const versioning = pick(ext, 'info', 'versioning');
  const v = isObject(versioning) ? versioning : {};
  const definition = { key: str(v.key) || 'x-api-version', location: str(v.location) || 'header' };
  if (v.enabled !== true) {
    return {
      childIds: [],
      definition,
      versionData: { not_versioned: true, versions: { Default: { name: 'Default' } } },
    };
  }
  const names: string[] = [str(v.name) || 'Default'];
  const childIds: string[] = [];
  for (const child of Array.isArray(v.versions) ? v.versions : []) {
    if (!isObject(child) || typeof child.name !== 'string' || typeof child.id !== 'string') continue;
    names.push(child.name);
    if (child.id !== '' && !childIds.includes(child.id)) childIds.push(child.id);
  }
  // fromEntries defines own members, so a version named __proto__ is listed too (an assignment would set the prototype)
  const versions = Object.fromEntries(names.map((name) => [name, { name }]));
  return { childIds, definition, versionData: { not_versioned: false, versions } };
}

/** Projects a stored OAS definition into its list entry and searchable columns. */
export function projectDefinition(id: string, doc: OasDocument): DefinitionColumns {
  const ext = extensionOf(doc);
  const orgId = str(pick(ext, 'info', 'orgId'));
  const name = str(pick(ext, 'info', 'name')) || str(pick(doc, 'info', 'title'));
  const authTypes = authTypesOf(doc);
  const keyless = authTypes.includes('keyless');
  const { childIds, versionData, definition } = versionDataOf(ext);
  const entry: ApiListEntry = {
    api_id: id,
    name,
    org_id: orgId,
    active: bool(pick(ext, 'info', 'state', 'active'), true),
    use_keyless: keyless,
    use_oauth2: !keyless && authTypes.includes('oauth'),
    auth: { auth_header_name: authHeaderName(doc) },
    definition,
    proxy: {
      listen_path: str(pick(ext, 'server', 'listenPath', 'value')) || '/',
      strip_listen_path: bool(pick(ext, 'server', 'listenPath', 'strip'), false),
      target_url: str(pick(ext, 'upstream', 'url')),
    },
    version_data: versionData,
  };
  return { orgId, name, apiType: 'rest', categories: categoriesOf(ext), authTypes, childIds, entry };
}
