import { EXTENSION, OasDocument } from './oas-document';
import { authHeaderName, authTypesOf, projectDefinition } from './projection';

const base = (extra: Partial<OasDocument> = {}, ext: Record<string, unknown> = {}): OasDocument => ({
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '1.0.0' },
  paths: {},
  ...extra,
  [EXTENSION]: {
    info: { name: 'Pets', state: { active: true } },
    upstream: { url: 'http://upstream.example' },
    server: { listenPath: { value: '/pets/', strip: true } },
    ...ext,
  },
});

/** A base definition `base` whose versioning is enabled, `name` its own version, listing `versions` as children. */
const versioned = (name: string, versions: { name: string; id: string }[], extra: Record<string, unknown> = {}) =>
  projectDefinition('base', base({}, { info: { name: 'V', versioning: { enabled: true, name, ...extra, versions } } }));

describe('projectDefinition', () => {
  it('projects an unversioned keyless definition into the 2.7 list entry', () => {
    const cols = projectDefinition(
      'abc',
      base({}, { info: { name: 'Pets', orgId: 'org1', categories: ['pets', ' animals ', 'pets', ''] } }),
    );
    expect(cols).toEqual({
      orgId: 'org1',
      name: 'Pets',
      apiType: 'rest',
      categories: ['pets', 'animals'],
      authTypes: ['keyless'],
      childIds: [],
      entry: {
        api_id: 'abc',
        name: 'Pets',
        org_id: 'org1',
        active: true,
        use_keyless: true,
        use_oauth2: false,
        auth: { auth_header_name: 'Authorization' },
        definition: { key: 'x-api-version', location: 'header' },
        proxy: { listen_path: '/pets/', strip_listen_path: true, target_url: 'http://upstream.example' },
        version_data: { not_versioned: true, versions: { Default: { name: 'Default' } } },
      },
    });
  });

  it('falls back to info.title, listen path / and an empty target when the extension is sparse', () => {
    const doc = {
      openapi: '3.0.3',
      info: { title: 'T', version: '1' },
      paths: {},
      [EXTENSION]: { info: {} },
    } as OasDocument;
    const { name, orgId, entry } = projectDefinition('x', doc);
    expect(name).toBe('T');
    expect(orgId).toBe('');
    expect(entry.proxy).toEqual({ listen_path: '/', strip_listen_path: false, target_url: '' });
    expect(entry.active).toBe(true);
  });

  it('lists a base definition’s versions and child ids', () => {
    const cols = versioned(
      'v1',
      [
        { name: 'v2', id: 'child2' },
        { name: 'v3', id: 'child3' },
      ],
      { location: 'url-param', key: 'version' },
    );
    expect(cols.childIds).toEqual(['child2', 'child3']);
    expect(cols.entry.version_data).toEqual({
      not_versioned: false,
      versions: { v1: { name: 'v1' }, v2: { name: 'v2' }, v3: { name: 'v3' } },
    });
    expect(cols.entry.definition).toEqual({ key: 'version', location: 'url-param' });
  });

  it('lists versions named like members of every object (__proto__, constructor) as any other', () => {
    const cols = versioned('__proto__', [
      { name: 'constructor', id: 'child2' },
      { name: '__proto__', id: 'child3' },
    ]);
    expect(cols.childIds).toEqual(['child2', 'child3']);
    // as it is stored and answered
    expect(JSON.stringify(cols.entry.version_data.versions)).toBe(
      '{"__proto__":{"name":"__proto__"},"constructor":{"name":"constructor"}}',
    );
  });

  it('ignores listed versions while versioning is not enabled', () => {
    const cols = projectDefinition(
      'b',
      base({}, { info: { name: 'V', versioning: { enabled: false, versions: [{ name: 'v2', id: 'c' }] } } }),
    );
    expect(cols.childIds).toEqual([]);
    expect(cols.entry.version_data.not_versioned).toBe(true);
  });
});

describe('authentication projection', () => {
  const schemes = {
    key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
    query: { type: 'apiKey', in: 'query', name: 'k' },
    oauth: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://idp/token', scopes: {} } } },
    jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    bearer: { type: 'http', scheme: 'bearer' },
    basic: { type: 'http', scheme: 'basic' },
    oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://idp/.well-known/openid-configuration' },
  };

  it('uses the first header apiKey scheme for auth_header_name, Authorization otherwise', () => {
    expect(authHeaderName(base({ components: { securitySchemes: { query: schemes.query, key: schemes.key } } }))).toBe(
      'X-Api-Key',
    );
    expect(authHeaderName(base({ components: { securitySchemes: { query: schemes.query } } }))).toBe('Authorization');
    expect(authHeaderName(base())).toBe('Authorization');
  });

  it.each([
    [[{ key: [] }], ['authToken']],
    [[{ bearer: [] }], ['authToken']],
    [[{ oauth: [] }], ['oauth']],
    [[{ jwt: [] }], ['jwt']],
    [[{ oidc: [] }], ['jwt']],
    [[{ basic: [] }], ['basic']],
    [
      [{ key: [], basic: [] }, { oauth: [] }],
      ['authToken', 'oauth', 'basic'],
    ],
    [[], ['keyless']],
    [[{}], ['keyless']],
    [[{ missing: [] }], ['keyless']],
  ])('security %j gives auth types %j', (security, expected) => {
    expect(authTypesOf(base({ security, components: { securitySchemes: schemes } } as never))).toEqual(expected);
  });

  it('sets use_oauth2 only when an oauth2 scheme is required and authentication is on', () => {
    const doc = base({ security: [{ oauth: [] }], components: { securitySchemes: schemes } });
    expect(projectDefinition('a', doc).entry.use_oauth2).toBe(true);
    expect(projectDefinition('a', base({ components: { securitySchemes: schemes } })).entry.use_oauth2).toBe(false);
    const off = base(
      { security: [{ oauth: [] }], components: { securitySchemes: schemes } },
      {
        server: { authentication: { enabled: false } },
      },
    );
    expect(projectDefinition('a', off).authTypes).toEqual(['keyless']);
    expect(projectDefinition('a', off).entry).toMatchObject({ use_oauth2: false, use_keyless: true });
  });

  it('follows a scheme declared as a local $ref, also through other refs', () => {
    const doc = (security: Record<string, string[]>[], securitySchemes: Record<string, unknown>) =>
      base({ security, components: { securitySchemes } } as never);
    const jwt = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };
    const toJ = { $ref: '#/components/securitySchemes/j' };
    expect(projectDefinition('a', doc([{ k: [] }], { k: toJ, j: jwt })).entry).toMatchObject({
      use_keyless: false,
      use_oauth2: false,
    });
    expect(authTypesOf(doc([{ k: [] }], { k: toJ, j: jwt }))).toEqual(['jwt']);
    expect(authTypesOf(doc([{ k: [] }], { k: { $ref: '#/components/securitySchemes/i' }, i: toJ, j: jwt }))).toEqual([
      'jwt',
    ]);
    // pointer escapes: ~1 is /, ~0 is ~, and the fragment is percent-escaped
    const escaped = { $ref: '#/components/securitySchemes/a~1b~0c%20d' };
    expect(authTypesOf(doc([{ k: [] }], { k: escaped, 'a/b~c d': schemes.oauth }))).toEqual(['oauth']);
    expect(authHeaderName(doc([], { k: { $ref: '#/components/securitySchemes/h' }, h: schemes.key }))).toBe(
      'X-Api-Key',
    );
    // one that leads nowhere (the validator refuses such a document) stands for no scheme
    expect(authTypesOf(doc([{ k: [] }], { k: { $ref: '#/components/securitySchemes/k' } }))).toEqual(['keyless']);
  });
});
