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

  it('applies parameters to the extension and, as the product imports them, to the operations they fit', () => {
    const json = { 'application/json': { schema: { type: 'object' } } };
    const doc: OasDocument = {
      openapi: '3.0.3',
      info: { title: 't', version: '1' },
      paths: {
        '/pets': {
          get: {
            operationId: 'listPets',
            parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }],
            responses: { '200': { description: 'ok', content: json } },
          },
          post: {
            requestBody: { $ref: '#/components/requestBodies/Pet' },
            responses: { '201': { description: 'made' } },
          },
        },
        '/pets/{id}': {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          get: { operationId: 'showPet', responses: { default: { $ref: '#/components/responses/Err' } } },
        },
        '/health': {
          get: { operationId: 'health', responses: { '200': { description: 'ok' } } },
          put: { requestBody: { content: { 'text/plain': {} } }, responses: {} },
        },
      },
      components: {
        requestBodies: { Pet: { content: { 'application/*': { schema: { type: 'object' } } } } },
        responses: {
          Err: {
            description: 'no',
            content: { 'text/plain': { examples: { a: { $ref: '#/components/examples/A' } } } },
          },
        },
        examples: { A: { value: 'gone' } },
      },
      [EXTENSION]: {
        info: { name: 'n' },
        server: { listenPath: { value: '/old/', strip: true } },
        middleware: {
          operations: {
            health: { block: { enabled: true } },
            listPets: { mockResponse: { enabled: false, fromOASExamples: { enabled: false, code: 418 } } },
          },
        },
      },
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
    const allow = { enabled: true };
    const validateRequest = { enabled: false, errorResponseCode: 422 };
    const mockResponse = { enabled: true, fromOASExamples: { enabled: true } };
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
          // parameters of its own; a response with a schema (the stored mock's other settings give way, as there)
          listPets: { mockResponse, allow, validateRequest },
          // a JSON request body through a ref; no response content
          petsPOST: { allow, validateRequest },
          // its path's parameters; a response with examples through refs
          showPet: { allow, validateRequest, mockResponse },
          // neither: allowed only, and no longer blocked
          health: { block: { enabled: false }, allow },
          healthPUT: { allow },
        },
      },
    });
    expect((doc[EXTENSION] as any).server.listenPath.value).toBe('/old/');
    // without allowList, an operation none of the others fits gets no entry
    const ops = (applyImportParams(doc, { validateRequest: true })[EXTENSION] as any).middleware.operations;
    expect(Object.keys(ops)).toEqual(['health', 'listPets', 'petsPOST', 'showPet']);
    expect(ops.health).toEqual({ block: { enabled: true } });
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
    // validateRequest and mockResponse do not fit an operation without parameters, body or response content
    expect(operationKeyErrors(doc, { validateRequest: false, mockResponse: true })).toEqual([]);
    (doc.paths as any)['/a'].parameters = [{ name: 'q', in: 'query', schema: { type: 'string' } }];
    (doc.paths as any)['/a'].get.responses = {
      '200': { description: 'ok', content: { 'text/plain': { example: 'x' } } },
    };
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
