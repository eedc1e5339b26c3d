import { EXTENSION, OasDocument } from './oas-document';
import {
  applyImportParams,
  mergeForPatch,
  operationKeyErrors,
  parseBooleanParam,
  parseImportParams,
} from './oas-patch';
import { validateExtension } from './oas.validator';

const stored: OasDocument = {
  openapi: '3.0.3',
  info: { title: 'Old', version: '1' },
  servers: [{ url: 'https://stored.example' }],
  paths: {},
  [EXTENSION]: { info: { id: 'a1', orgId: 'org1', name: 'Old' }, upstream: { url: 'http://old' } },
};

describe('mergeForPatch', () => {
  it('keeps the stored extension and servers when the body has neither', () => {
    const body: OasDocument = { openapi: '3.0.3', info: { title: 'New', version: '2' }, paths: { '/x': {} } };
    expect(mergeForPatch(stored, body)).toEqual({ ...body, servers: stored.servers, [EXTENSION]: stored[EXTENSION] });
  });

  it('takes the body’s extension and servers when given, keeping the stored org when the body omits it', () => {
    const body: OasDocument = {
      openapi: '3.0.3',
      info: { title: 'New', version: '2' },
      paths: {},
      servers: [],
      [EXTENSION]: { info: { name: 'New' } },
    };
    const merged = mergeForPatch(stored, body);
    expect(merged.servers).toEqual([]);
    expect(merged[EXTENSION]).toEqual({ info: { name: 'New', orgId: 'org1' } });
  });

  it('lets the body move the API to another org explicitly', () => {
    const body: OasDocument = {
      openapi: '3.0.3',
      info: { title: 'New', version: '2' },
      paths: {},
      [EXTENSION]: { info: { name: 'New', orgId: 'org2' } },
    };
    expect(mergeForPatch(stored, body)[EXTENSION]).toEqual({ info: { name: 'New', orgId: 'org2' } });
  });

  it('modifies neither input', () => {
    const body: OasDocument = { openapi: '3.0.3', info: { title: 'New', version: '2' }, paths: {} };
    const before = JSON.stringify([stored, body]);
    const merged = mergeForPatch(stored, body);
    (merged[EXTENSION] as any).info.name = 'changed';
    expect(JSON.stringify([stored, body])).toBe(before);
  });
});

describe('import query parameters', () => {
  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
    ['TRUE', undefined],
    ['True', undefined],
    ['FALSE', undefined],
    [' true', undefined],
    ['true ', undefined],
    ['01', undefined],
    ['yes', undefined],
    ['', undefined],
    ['2', undefined],
  ])('parses %j as %j', (raw, expected) => expect(parseBooleanParam(raw)).toBe(expected));

  it('reads every parameter and ignores unknown ones', () => {
    const { params, errors } = parseImportParams({
      upstreamURL: 'https://up.example/v1',
      listenPath: '/lp/',
      customDomain: 'api.example.com',
      allowList: 'true',
      validateRequest: '0',
      mockResponse: '1',
      authentication: 'false',
      other: 'x',
    });
    expect(errors).toEqual([]);
    expect(params).toEqual({
      upstreamURL: 'https://up.example/v1',
      listenPath: '/lp/',
      customDomain: 'api.example.com',
      allowList: true,
      validateRequest: false,
      mockResponse: true,
      authentication: false,
    });
  });

  it('names every unusable parameter', () => {
    const { errors } = parseImportParams({
      upstreamURL: 'not-a-url',
      listenPath: 'no-slash',
      allowList: 'maybe',
      authentication: ['1', '0'],
    });
    expect(errors).toEqual([
      'query parameter upstreamURL must be an absolute http(s) URL',
      'query parameter listenPath must be a path starting with /',
      'query parameter allowList must be true, false, 1 or 0',
      'authentication is given more than once',
    ]);
  });

  it.each(['\r\n', '\n', '\u0000', '\u0007', '\t', '\u007f', ' ', '\u00a0'])(
    'refuses %j in the upstream URL and the listen path, which the URL parser would drop',
    (c) => {
      const { params, errors } = parseImportParams({ upstreamURL: `http://x.io${c}:1`, listenPath: `/a${c}b/` });
      expect(params).toEqual({});
      expect(errors).toEqual([
        'query parameter upstreamURL must not contain whitespace or control characters',
        'query parameter listenPath must not contain whitespace or control characters',
      ]);
    },
  );

  it('applies parameters to the extension and every operation', () => {
    const doc: OasDocument = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: { '/pets': { get: { operationId: 'listPets', responses: {} }, post: { responses: {} } } },
      [EXTENSION]: { info: { name: 'n' }, server: { listenPath: { value: '/old/', strip: true } } },
    };
    const out = applyImportParams(doc, {
      upstreamURL: 'https://up',
      listenPath: '/new/',
      customDomain: 'api.example.com',
      allowList: true,
      validateRequest: false,
      mockResponse: true,
      authentication: true,
    });
    expect(out[EXTENSION]).toEqual({
      info: { name: 'n' },
      upstream: { url: 'https://up' },
      server: {
        listenPath: { value: '/new/', strip: true },
        customDomain: { enabled: true, name: 'api.example.com' },
        authentication: { enabled: true },
      },
      middleware: {
        operations: {
          listPets: {
            allow: { enabled: true },
            validateRequest: { enabled: false },
            mockResponse: { enabled: true, fromOASExamples: { enabled: true } },
          },
          petsPOST: {
            allow: { enabled: true },
            validateRequest: { enabled: false },
            mockResponse: { enabled: true, fromOASExamples: { enabled: true } },
          },
        },
      },
    });
    expect((doc[EXTENSION] as any).server.listenPath.value).toBe('/old/');
  });

  it('turns a custom domain off with an empty value, and stays inert without parameters', () => {
    const doc: OasDocument = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {},
      [EXTENSION]: { info: { name: 'n' } },
    };
    expect((applyImportParams(doc, { customDomain: '' })[EXTENSION] as any).server.customDomain).toEqual({
      enabled: false,
      name: '',
    });
    expect(applyImportParams(doc, {})).toEqual(doc);
  });

  it('keeps an operationId like __proto__ as plain data', () => {
    const doc: OasDocument = JSON.parse(
      `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"operationId":"__proto__","responses":{}}}},"${EXTENSION}":{"info":{"name":"n"}}}`,
    );
    const out = applyImportParams(doc, { allowList: true });
    expect(({} as any).allow).toBeUndefined();
    expect(JSON.parse(JSON.stringify(out))[EXTENSION].middleware.operations.__proto__).toEqual({
      allow: { enabled: true },
    });
  });

  it('refuses to key an operation by a member name a request body may not hold', () => {
    const doc: OasDocument = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/a': { get: { operationId: '__proto__', responses: {} }, put: { operationId: 'constructor', responses: {} } },
        '/b': { post: { operationId: 'prototype', responses: {} } },
      },
      [EXTENSION]: { info: { name: 'n' } },
    };
    const reason = (params: string) =>
      `${params} would store ${EXTENSION}.middleware.operations.__proto__ for GET /a, ` +
      'a member name a request body may not hold: give the operation another operationId';
    expect(operationKeyErrors(doc, { allowList: true })).toEqual([reason('query parameter allowList')]);
    expect(operationKeyErrors(doc, { validateRequest: false, mockResponse: true })).toEqual([
      reason('query parameters validateRequest, mockResponse'),
    ]);
    // parameters that key no operation, and operations keyed by names the parser takes, are fine
    expect(operationKeyErrors(doc, { upstreamURL: 'http://x', authentication: true })).toEqual([]);
    delete (doc.paths as any)['/a'].get;
    expect(operationKeyErrors(doc, { allowList: true })).toEqual([]);
  });

  it('tells the first 20 operations it cannot key, then how many more', () => {
    const paths = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`/p${i}`, { get: { operationId: '__proto__', responses: {} } }]),
    );
    const errors = operationKeyErrors(
      { openapi: '3.0.3', info: { title: 't', version: '1' }, paths },
      { allowList: true },
    );
    expect(errors).toHaveLength(21);
    expect(errors[19]).toMatch(/ for GET \/p19, /);
    expect(errors[20]).toBe('and 30 more error(s)');
  });
});

describe('upstreamURL and listenPath length', () => {
  // 2048 characters (code points) as the document's maxLength counts them, in 4095 UTF-16 units
  const path = `/${'😀'.repeat(2047)}`;
  const url = `http://up/${'😀'.repeat(2038)}`;

  it('takes 2048 characters written in more UTF-16 units, in the query and in the extension', () => {
    const { params, errors } = parseImportParams({ listenPath: path, upstreamURL: url });
    expect(errors).toEqual([]);
    expect(params).toEqual({ listenPath: path, upstreamURL: url });
    const ext = {
      info: { name: 'n', state: { active: true } },
      upstream: { url },
      server: { listenPath: { value: path } },
    };
    expect(validateExtension(ext)).toEqual([]);
  });

  it('refuses one character more, naming the query parameter, as the document says (maxLength 2048)', () => {
    const { errors } = parseImportParams({ listenPath: `${path}a`, upstreamURL: `${url}a` });
    expect(errors).toEqual([
      'query parameter upstreamURL must be at most 2048 characters',
      'query parameter listenPath must be at most 2048 characters',
    ]);
  });
});
