import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useService } from '../helpers/use-service';
import { TEST_SECRETS } from '../helpers/test-env';
import { ADMIN, createApi, EXT, GATEWAY, oasDoc, seedUser } from '../helpers/dashboard';
import { VALIDATION_LIMITS } from '../../src/gateway/apis/oas-validation.pool';

const HEX32 = /^[0-9a-f]{32}$/;
const FORBIDDEN = { status: 'error', message: 'Attempted administrative access with invalid or missing key!' };

describe('gateway: OAS API definitions', () => {
  const t = useService();
  const gw = () => t.http.with(GATEWAY);

  describe('credentials', () => {
    it.each([
      ['none', {}],
      ['a wrong key', { 'x-gateway-authorization': 'wrong' }],
      ['the admin secret', ADMIN],
      ['the portal token', { authorization: TEST_SECRETS.PORTAL_API_TOKEN }],
    ])('refuses %s with 403 on every route', async (_name, headers) => {
      const id = await createApi(t, oasDoc());
      for (const [method, path] of [
        ['POST', '/gateway/apis/oas'],
        ['GET', '/gateway/apis/oas'],
        ['GET', `/gateway/apis/oas/${id}`],
        ['PUT', `/gateway/apis/oas/${id}`],
        ['PATCH', `/gateway/apis/oas/${id}`],
        ['DELETE', `/gateway/apis/oas/${id}`],
        ['POST', '/gateway/analytics'],
      ]) {
        const res = await t.http.send(method, path, {
          body: method === 'GET' || method === 'DELETE' ? undefined : oasDoc(),
          headers,
        });
        expect([method, path, res.status]).toEqual([method, path, 403]);
        expect(res.body).toEqual(FORBIDDEN);
      }
    });

    it('refuses a dashboard access key', async () => {
      const user = await seedUser(t);
      const res = await t.http.get('/gateway/apis/oas', {
        authorization: `Bearer ${user.key}`,
        'x-gateway-authorization': user.key,
      });
      expect(res.status).toBe(403);
    });
  });

  describe('create, read, replace, delete', () => {
    it('creates with a generated id and returns it in the success body', async () => {
      const res = await gw().post('/gateway/apis/oas', oasDoc());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ key: expect.stringMatching(HEX32), status: 'ok', action: 'added', key_hash: '' });
      const got = await gw().get(`/gateway/apis/oas/${res.body.key}`);
      expect(got.status).toBe(200);
      const expected = oasDoc();
      expected[EXT].info.id = res.body.key;
      expect(got.body).toEqual(expected);
    });

    it('takes the id from info.id and refuses it twice with 409', async () => {
      const res = await gw().post('/gateway/apis/oas', oasDoc({ id: 'my-api.v1' }));
      expect(res.body).toEqual({ key: 'my-api.v1', status: 'ok', action: 'added', key_hash: '' });
      const again = await gw().post('/gateway/apis/oas', oasDoc({ id: 'my-api.v1' }));
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ status: 'error', message: 'an API with ID my-api.v1 already exists' });
    });

    it('keeps the document as sent, key order included', async () => {
      const doc = oasDoc({ id: 'ordered' });
      const res = await gw().get(`/gateway/apis/oas/${await createApi(t, doc)}`);
      expect(Object.keys(res.body)).toEqual(Object.keys(doc));
      expect(res.text.indexOf('"openapi"')).toBeLessThan(res.text.indexOf('"paths"'));
    });

    it('lists every definition', async () => {
      const id = await createApi(t, oasDoc({ name: 'Listed' }));
      const res = await gw().get('/gateway/apis/oas');
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.find((d: any) => d[EXT].info.id === id)[EXT].info.name).toBe('Listed');
    });

    it('replaces with PUT, keeping the organisation when the body does not name one', async () => {
      const id = await createApi(t, oasDoc({ org: 'orgP', name: 'Before' }));
      const next = oasDoc({ name: 'After' });
      const res = await gw().put(`/gateway/apis/oas/${id}`, next);
      expect(res.body).toEqual({ key: id, status: 'ok', action: 'modified', key_hash: '' });
      const got = await gw().get(`/gateway/apis/oas/${id}`);
      expect(got.body[EXT].info).toEqual({ name: 'After', state: { active: true }, id, orgId: 'orgP' });
      const noExt = oasDoc();
      delete noExt[EXT];
      const refused = await gw().put(`/gateway/apis/oas/${id}`, noExt);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ status: 'error', message: `${EXT} is required` });
    });

    it('deletes', async () => {
      const id = await createApi(t, oasDoc());
      const res = await gw().delete(`/gateway/apis/oas/${id}`);
      expect(res.body).toEqual({ key: id, status: 'ok', action: 'deleted', key_hash: '' });
      expect((await gw().get(`/gateway/apis/oas/${id}`)).status).toBe(404);
      expect((await gw().delete(`/gateway/apis/oas/${id}`)).body).toEqual({
        status: 'error',
        message: 'API not found',
      });
    });

    it.each(['GET', 'PUT', 'PATCH', 'DELETE'])('%s of an unknown id is 404 API not found', async (method) => {
      const res = await gw().send(method, '/gateway/apis/oas/does-not-exist', {
        body: method === 'PUT' || method === 'PATCH' ? oasDoc() : undefined,
      });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status: 'error', message: 'API not found' });
    });

    it.each([
      ['PUT', 'update'],
      ['PATCH', 'patch'],
      ['DELETE', 'delete'],
    ])('%s of a blank apiID is 400 Must specify an apiID to %s, as the gateway answers', async (method, operation) => {
      for (const blank of ['%20', '%20%20', '%09']) {
        const res = await gw().send(method, `/gateway/apis/oas/${blank}`, {
          body: method === 'DELETE' ? undefined : oasDoc(),
        });
        expect([blank, res.status, res.body]).toEqual([
          blank,
          400,
          { status: 'error', message: `Must specify an apiID to ${operation}` },
        ]);
      }
    });
  });

  describe('bad input', () => {
    it.each([
      [
        'no extension',
        (() => {
          const d = oasDoc();
          delete d[EXT];
          return d;
        })(),
        `${EXT} is required`,
      ],
      [
        'no extension name',
        (() => {
          const d = oasDoc();
          delete d[EXT].info.name;
          return d;
        })(),
        `${EXT}.info.name is required`,
      ],
      [
        'a bad upstream',
        oasDoc({ ext: { upstream: { url: 'not-a-url' } } }),
        `${EXT}.upstream.url must be an absolute http(s) URL`,
      ],
      [
        'a bad listen path',
        oasDoc({ ext: { server: { listenPath: { value: 'x', strip: 'yes' } } } }),
        `${EXT}.server.listenPath.value must start with /; ${EXT}.server.listenPath.strip must be a boolean`,
      ],
      ['a bad id', oasDoc({ id: 'has space' }), `${EXT}.info.id must be 1-128 letters, digits, '.', '_' or '-'`],
      [
        'CR LF in the upstream URL',
        oasDoc({ ext: { upstream: { url: 'http://x.io\r\n:1' } } }),
        `${EXT}.upstream.url must not contain whitespace or control characters`,
      ],
      [
        'a space in the upstream URL',
        oasDoc({ ext: { upstream: { url: 'http://x.io/a b' } } }),
        `${EXT}.upstream.url must not contain whitespace or control characters`,
      ],
      [
        'DEL in the upstream URL',
        oasDoc({ ext: { upstream: { url: 'http://x.io/\u007f' } } }),
        `${EXT}.upstream.url must not contain whitespace or control characters`,
      ],
      [
        'CR LF in the listen path',
        oasDoc({ ext: { server: { listenPath: { value: '/a\r\nb/' } } } }),
        `${EXT}.server.listenPath.value must not contain whitespace or control characters`,
      ],
      [
        'a tab in the custom domain',
        oasDoc({ ext: { server: { customDomain: { enabled: true, name: 'api.example.com\t' } } } }),
        `${EXT}.server.customDomain.name must not contain control characters`,
      ],
      [
        'CR LF in the name',
        oasDoc({ name: 'Pets\r\nX-Evil: 1' }),
        `${EXT}.info.name must not contain control characters`,
      ],
      ['BEL in the name', oasDoc({ name: 'Pets\u0007' }), `${EXT}.info.name must not contain control characters`],
      [
        'LF in the organisation',
        oasDoc({ org: 'acme\nX: 1' }),
        `${EXT}.info.orgId must not contain control characters`,
      ],
      [
        'ESC in a category',
        oasDoc({ categories: ['ok', 'pay\u001b[31m'] }),
        `${EXT}.info.categories must not contain control characters`,
      ],
      [
        'bad categories',
        oasDoc({ categories: ['ok', 5 as unknown as string] }),
        `${EXT}.info.categories must be an array of non-empty strings`,
      ],
      [
        'a category with a comma',
        oasDoc({ categories: ['ok', 'a,b'] }),
        `${EXT}.info.categories must not contain a comma (GET /api/apis?category= separates names by commas)`,
      ],
    ])('refuses a definition with %s', async (_name, doc, message) => {
      const res = await gw().post('/gateway/apis/oas', doc);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'error', message });
    });

    it.each([
      [
        'Swagger 2.0',
        { swagger: '2.0', info: { title: 'x', version: '1' }, paths: {} },
        'the body is not an OpenAPI 3 document: `openapi` must be a version string 3.x.y',
      ],
      [
        'a number for openapi',
        { openapi: 3, info: { title: 'x', version: '1' }, paths: {} },
        'the body is not an OpenAPI 3 document: `openapi` must be a version string 3.x.y',
      ],
      ['an array', [], 'the body is not an OpenAPI 3 document: expected a JSON object'],
      ['no info', { openapi: '3.0.3', paths: {} }, "the document: REQUIRED must have required property 'info'"],
      [
        'security as an object',
        { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {}, security: {} },
        'security: TYPE must be array',
      ],
      [
        'webhooks in OpenAPI 3.0',
        { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: {}, webhooks: {} },
        'webhooks: ADDITIONAL PROPERTY must NOT have additional properties: webhooks is not expected to be here',
      ],
      [
        'an operation without responses',
        { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: { '/a': { get: { responses: {} } } } },
        'paths./a.get.responses: MINPROPERTIES must NOT have fewer than 1 properties',
      ],
      [
        'a bad schema behind a $ref',
        {
          openapi: '3.0.3',
          info: { title: 'x', version: '1' },
          paths: {},
          components: {
            schemas: { A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' } } }, B: { type: 5 } },
          },
        },
        'components.schemas.A.properties.b.type: TYPE must be string; components.schemas.B.type: TYPE must be string',
      ],
      [
        'a path without slash',
        { openapi: '3.0.3', info: { title: 'x', version: '1' }, paths: { pets: {} } },
        'Entries in the OpenAPI `paths` object must begin with a leading slash.',
      ],
      [
        'a dangling $ref',
        {
          openapi: '3.0.3',
          info: { title: 'x', version: '1' },
          paths: {},
          components: { schemas: { A: { $ref: '#/components/schemas/B' } } },
        },
        'Missing $ref pointer "#/components/schemas/B". Token "B" does not exist.',
      ],
    ])('refuses %s with the validator’s reason', async (_name, body, message) => {
      const res = await gw().post('/gateway/apis/oas', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'error', message });
    });

    it('tells the first 20 of many undeclared security requirements, then how many more', async () => {
      const doc = oasDoc({ id: 'many-undeclared' });
      doc.security = Array.from({ length: 50000 }, () => ({ a: [] }));
      const res = await gw().post('/gateway/apis/oas', doc);
      expect(res.status).toBe(400);
      const reasons = res.body.message.split('; ');
      expect(reasons).toHaveLength(21);
      expect(reasons[19]).toBe(
        'security[19] requires the security scheme a, which components.securitySchemes does not declare',
      );
      expect(reasons[20]).toBe('and 49980 more error(s)');
    });

    it('tells the first 20 of many schema errors, then how many more', async () => {
      const doc = oasDoc({ id: 'many-schema-errors' });
      doc.paths = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`/p${i}`, { get: { responses: {} } }]));
      const res = await gw().post('/gateway/apis/oas', doc);
      expect(res.status).toBe(400);
      const reasons = res.body.message.split('; ');
      expect(reasons).toHaveLength(21);
      expect(reasons[0]).toBe('paths./p0.get.responses: MINPROPERTIES must NOT have fewer than 1 properties');
      expect(reasons[20]).toBe('and 10 more error(s)');
    });

    it('refuses a security requirement naming a scheme the document does not declare', async () => {
      const doc = oasDoc({ id: 'undeclared-scheme' });
      doc.components = { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } } };
      doc.security = [{ key: [] }, { missing: [] }];
      doc.paths = { '/a': { get: { security: [{ toString: [] }], responses: { 200: { description: 'a' } } } } };
      const res = await gw().post('/gateway/apis/oas', doc);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        status: 'error',
        message:
          'security[1] requires the security scheme missing, which components.securitySchemes does not declare; ' +
          'paths./a.get.security[0] requires the security scheme toString, which components.securitySchemes does not declare',
      });
      doc.security = [{ key: [] }];
      doc.paths = { '/a': { get: { security: [], responses: { 200: { description: 'a' } } } } };
      expect((await gw().post('/gateway/apis/oas', doc)).status).toBe(200);
    });

    it('refuses a security scheme whose $ref leads back to itself, to nothing, or outside the document', async () => {
      const doc = (schemes: Record<string, unknown>) => oasDoc({ id: 'ref-scheme', schemes, security: [{ k: [] }] });
      for (const [schemes, message] of [
        [
          { k: { $ref: '#/components/securitySchemes/k' } },
          'components.securitySchemes.k: its $refs lead in a circle back to #/components/securitySchemes/k',
        ],
        [
          { k: { $ref: '#/components/securitySchemes/j' }, j: { $ref: '#/components/securitySchemes/k' } },
          'components.securitySchemes.k: its $refs lead in a circle back to #/components/securitySchemes/j; ' +
            'components.securitySchemes.j: its $refs lead in a circle back to #/components/securitySchemes/k',
        ],
        [
          { k: { $ref: 'https://example.com/schemes.json#/k' } },
          'components.securitySchemes.k: its $ref https://example.com/schemes.json#/k is outside the document, ' +
            'which is never read',
        ],
        [
          { k: { $ref: '#/components/securitySchemes/none' } },
          'Missing $ref pointer "#/components/securitySchemes/none". Token "none" does not exist.',
        ],
      ] as const) {
        const res = await gw().post('/gateway/apis/oas', doc(schemes));
        expect([res.status, res.body]).toEqual([400, { status: 'error', message }]);
      }
      const ok = await gw().post(
        '/gateway/apis/oas',
        doc({ k: { $ref: '#/components/securitySchemes/j' }, j: { type: 'http', scheme: 'basic' } }),
      );
      expect(ok.status).toBe(200);
    });

    it('never fetches external $refs', async () => {
      const doc = oasDoc({ id: 'external-ref' });
      doc.components = { schemas: { A: { $ref: 'http://127.0.0.1:9/schema.json' }, B: { $ref: '/etc/passwd' } } };
      const res = await gw().post('/gateway/apis/oas', doc);
      expect(res.status).toBe(200);
      expect((await gw().get('/gateway/apis/oas/external-ref')).body.components).toEqual(doc.components);
    });

    it('answers a non-JSON body with 400 request malformed', async () => {
      const id = await createApi(t, oasDoc());
      for (const [method, path] of [
        ['POST', '/gateway/apis/oas'],
        ['PUT', `/gateway/apis/oas/${id}`],
        ['PATCH', `/gateway/apis/oas/${id}`],
      ]) {
        const res = await gw().send(method, path, { raw: '{"openapi": "3.0.3",' });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ status: 'error', message: 'request malformed' });
      }
    });

    it('refuses a 5 MB body with 413 in the gateway body', async () => {
      const doc = oasDoc();
      doc.info.description = 'x'.repeat(5 * 1024 * 1024);
      const res = await gw().post('/gateway/apis/oas', doc);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ status: 'error', message: 'request body too large' });
    });
  });

  describe('validation off the request thread', () => {
    /** 1.8 KB whose $refs double at each of 40 levels: dereferenced, far beyond any machine. */
    /** A document with `schemas`, one operation answering the schema `root`. */
    const withSchemas = (schemas: Record<string, unknown>, root: string) => {
      const doc = oasDoc();
      doc.components = { schemas };
      doc.paths = {
        '/x': {
          get: {
            responses: {
              200: {
                description: 'x',
                content: { 'application/json': { schema: { $ref: `#/components/schemas/${root}` } } },
              },
            },
          },
        },
      };
      return doc;
    };
    const refBomb = () => {
      const schemas: Record<string, unknown> = { s40: { type: 'string' } };
      for (let i = 0; i < 40; i++) {
        const next = { $ref: `#/components/schemas/s${i + 1}` };
        schemas[`s${i}`] = { type: 'object', properties: { a: next, b: next } };
      }
      return withSchemas(schemas, 's0');
    };

    it('refuses a document whose $refs expand without end, and answers other requests meanwhile', async () => {
      const order: string[] = [];
      const bomb = gw()
        .post('/gateway/apis/oas', refBomb())
        .then((r) => (order.push('bomb'), r));
      await new Promise((r) => setTimeout(r, 300));
      const list = await gw().get('/gateway/apis/oas');
      order.push('list');
      expect(list.status).toBe(200);
      const refused = await bomb;
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ status: 'error', message: expect.stringMatching(/^invalid OpenAPI document/) });
      expect(order).toEqual(['list', 'bomb']);
      // the threads still serve
      const ok = await gw().post('/gateway/apis/oas', oasDoc());
      expect(ok.status).toBe(200);
    });

    /** 30 schemas, each $ref-ing the one before three times: the parser gives up dereferencing it after its 5 s. */
    const slowDoc = () => {
      const schemas: Record<string, unknown> = { s0: { type: 'string' } };
      for (let i = 1; i <= 30; i++) {
        const prev = { $ref: `#/components/schemas/s${i - 1}` };
        schemas[`s${i}`] = { type: 'object', properties: { a: prev, b: prev, c: prev } };
      }
      return withSchemas(schemas, 's30');
    };
    const petstore = () => JSON.parse(readFileSync(join(__dirname, '..', '..', 'examples', 'petstore.json'), 'utf8'));
    const BUSY = {
      status: 'error',
      message: 'the service is busy validating other OpenAPI documents: send this one again in 10 s',
    };
    /** Each slow document is refused for its own reason, or not taken up (503): never for time spent waiting. */
    const expectOwnFaultOrBusy = (res: { status: number; body: any; headers: Record<string, unknown> }) => {
      if (res.status === 503) {
        expect(res.body).toEqual(BUSY);
        expect(res.headers['retry-after']).toBe('10');
      } else {
        expect([res.status, res.body]).toEqual([400, { status: 'error', message: expect.any(String) }]);
        expect(res.body.message).not.toMatch(/not validated within/);
      }
    };

    it('does not blame a valid document for the wait behind twelve slow ones', async () => {
      const id = await createApi(t, oasDoc());
      const slow = Array.from({ length: 12 }, () => gw().post('/gateway/apis/oas', slowDoc()));
      const valid = await gw().patch(`/gateway/apis/oas/${id}`, petstore());
      // validated once a thread took it, or told the service is busy: never a 400
      if (valid.status === 503) {
        expect(valid.body).toEqual(BUSY);
        expect(valid.headers['retry-after']).toBe('10');
      } else
        expect([valid.status, valid.body]).toEqual([200, { key: id, status: 'ok', action: 'modified', key_hash: '' }]);
      for (const res of await Promise.all(slow)) expectOwnFaultOrBusy(res);
    });

    it('answers 503 with Retry-After while every thread and the whole queue are taken, then serves again', async () => {
      const id = await createApi(t, oasDoc());
      // every thread taken, the whole queue waiting, and two more than it queues
      const { threads, maxWaiting } = VALIDATION_LIMITS;
      const slow = Array.from({ length: threads + maxWaiting + 2 }, () => gw().post('/gateway/apis/oas', slowDoc()));
      const firstBusy = new Promise<void>((resolve) => {
        for (const res of slow) void res.then((r) => r.status === 503 && resolve());
        void Promise.all(slow).then(() => resolve());
      });
      await firstBusy;
      const refused = await gw().patch(`/gateway/apis/oas/${id}`, petstore());
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual(BUSY);
      expect(refused.headers['retry-after']).toBe('10');
      const settled = await Promise.all(slow);
      for (const res of settled) expectOwnFaultOrBusy(res);
      expect((await gw().patch(`/gateway/apis/oas/${id}`, petstore())).status).toBe(200);
    });
  });

  describe('PATCH /gateway/apis/oas/{apiID} (interface 4.1)', () => {
    const stored = () =>
      oasDoc({
        name: 'Stored',
        org: 'orgS',
        categories: ['c1'],
        servers: [{ url: 'https://stored.example' }],
        ext: {
          upstream: { url: 'http://stored-upstream' },
          server: { listenPath: { value: '/stored/', strip: false } },
        },
      });

    it('keeps the stored extension and servers when the body has neither', async () => {
      const id = await createApi(t, stored());
      const body = oasDoc({ name: 'Patched' });
      delete body[EXT];
      body.info.title = 'Patched title';
      const res = await gw().patch(`/gateway/apis/oas/${id}`, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ key: id, status: 'ok', action: 'modified', key_hash: '' });
      const got = (await gw().get(`/gateway/apis/oas/${id}`)).body;
      const expectedExt = stored()[EXT];
      expectedExt.info.id = id;
      expect(got).toEqual({ ...body, servers: [{ url: 'https://stored.example' }], [EXT]: expectedExt });
    });

    it('takes the extension and servers of the body when given', async () => {
      const id = await createApi(t, stored());
      const body = oasDoc({
        name: 'New name',
        servers: [{ url: 'https://new.example' }],
        ext: { upstream: { url: 'http://new-upstream' } },
      });
      expect((await gw().patch(`/gateway/apis/oas/${id}`, body)).status).toBe(200);
      const got = (await gw().get(`/gateway/apis/oas/${id}`)).body;
      expect(got.servers).toEqual([{ url: 'https://new.example' }]);
      expect(got[EXT]).toEqual({ ...body[EXT], info: { ...body[EXT].info, id, orgId: 'orgS' } });
    });

    it('applies every import query parameter after the merge', async () => {
      const id = await createApi(t, stored());
      const body = oasDoc();
      delete body[EXT];
      body.paths['/pets'].get.responses['200'].content = { 'application/json': { example: [] } };
      const qs =
        'upstreamURL=https%3A%2F%2Fup.example%2Fv2&listenPath=%2Fnew%2F&customDomain=api.example.com&allowList=true&validateRequest=1&mockResponse=0&authentication=false';
      const res = await gw().patch(`/gateway/apis/oas/${id}?${qs}`, body);
      expect(res.status).toBe(200);
      const ext = (await gw().get(`/gateway/apis/oas/${id}`)).body[EXT];
      expect(ext.upstream).toEqual({ url: 'https://up.example/v2' });
      expect(ext.server).toEqual({
        listenPath: { value: '/new/', strip: false },
        customDomain: { enabled: true, name: 'api.example.com' },
        authentication: { enabled: false },
      });
      // as the product's import: validateRequest where a JSON body (or a parameter) is taken, mockResponse where a
      // response documents an example, examples or a schema, allowList everywhere
      expect(ext.middleware).toEqual({
        operations: {
          listPets: { allow: { enabled: true }, mockResponse: { enabled: false, fromOASExamples: { enabled: false } } },
          petsPOST: { allow: { enabled: true }, validateRequest: { enabled: true, errorResponseCode: 422 } },
        },
      });
      expect(ext.info).toEqual({ ...stored()[EXT].info, id });
    });

    it('parses booleans as true/false/1/0 and names an unparsable parameter', async () => {
      const id = await createApi(t, stored());
      const body = oasDoc();
      delete body[EXT];
      for (const [raw, value] of [
        ['true', true],
        ['0', false],
        ['1', true],
        ['false', false],
      ] as const) {
        expect((await gw().patch(`/gateway/apis/oas/${id}?authentication=${raw}`, body)).status).toBe(200);
        expect((await gw().get(`/gateway/apis/oas/${id}`)).body[EXT].server.authentication).toEqual({ enabled: value });
      }
      for (const [qs, message] of [
        ['allowList=yes', 'query parameter allowList must be true, false, 1 or 0'],
        ['allowList=TRUE', 'query parameter allowList must be true, false, 1 or 0'],
        ['validateRequest=True', 'query parameter validateRequest must be true, false, 1 or 0'],
        ['mockResponse=FALSE', 'query parameter mockResponse must be true, false, 1 or 0'],
        ['authentication=%20true', 'query parameter authentication must be true, false, 1 or 0'],
        ['validateRequest=', 'query parameter validateRequest must be true, false, 1 or 0'],
        ['mockResponse=2', 'query parameter mockResponse must be true, false, 1 or 0'],
        ['authentication=1&authentication=0', 'authentication is given more than once'],
        ['upstreamURL=nope', 'query parameter upstreamURL must be an absolute http(s) URL'],
        ['listenPath=nope', 'query parameter listenPath must be a path starting with /'],
        [
          'upstreamURL=http://x.io%0d%0aX:1',
          'query parameter upstreamURL must not contain whitespace or control characters',
        ],
        [
          'upstreamURL=http://x.io/%7F',
          'query parameter upstreamURL must not contain whitespace or control characters',
        ],
        [
          'upstreamURL=http://x.io/a%20b',
          'query parameter upstreamURL must not contain whitespace or control characters',
        ],
        ['listenPath=%2Fa%0d%0ab%2F', 'query parameter listenPath must not contain whitespace or control characters'],
        ['customDomain=api.example.com%0a', 'query parameter customDomain must be a host name'],
      ]) {
        const res = await gw().patch(`/gateway/apis/oas/${id}?${qs}`, body);
        expect([qs, res.status]).toEqual([qs, 400]);
        expect(res.body).toEqual({ status: 'error', message });
      }
    });

    it('checks the id first, then JSON, then the document, and leaves the definition untouched on failure', async () => {
      const id = await createApi(t, stored());
      const before = (await gw().get(`/gateway/apis/oas/${id}`)).body;
      expect((await gw().patch('/gateway/apis/oas/nope', { openapi: 'x' })).body).toEqual({
        status: 'error',
        message: 'API not found',
      });
      const notOas = await gw().patch(`/gateway/apis/oas/${id}`, {
        openapi: '3.0.3',
        info: { version: '1' },
        paths: {},
      });
      expect(notOas.status).toBe(400);
      expect(notOas.body).toEqual({ status: 'error', message: "info: REQUIRED must have required property 'title'" });
      const mismatch = await gw().patch(`/gateway/apis/oas/${id}`, oasDoc({ id: 'someone-else' }));
      expect(mismatch.status).toBe(400);
      expect(mismatch.body).toEqual({
        status: 'error',
        message: 'the API ID in x-gateway-api-gateway.info.id does not match the path',
      });
      const badExt = await gw().patch(`/gateway/apis/oas/${id}`, oasDoc({ ext: { info: { name: '' } } }));
      expect(badExt.body).toEqual({ status: 'error', message: `${EXT}.info.name must not be empty` });
      expect((await gw().get(`/gateway/apis/oas/${id}`)).body).toEqual(before);
    });

    it('refuses to key an operation __proto__, which the service would refuse when the definition is sent back', async () => {
      const id = await createApi(t, stored());
      const before = (await gw().get(`/gateway/apis/oas/${id}`)).body;
      const body = oasDoc({
        paths: {
          '/a': { get: { operationId: '__proto__', responses: { 200: { description: 'a' } } } },
          '/b': { get: { operationId: 'constructor', responses: { 200: { description: 'b' } } } },
        },
      });
      delete body[EXT];
      body.paths['/a'].get.responses['200'].content = { 'text/plain': { example: 'a' } };
      const refused = await gw().patch(`/gateway/apis/oas/${id}?allowList=true&mockResponse=0`, body);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        status: 'error',
        message:
          `query parameters allowList, mockResponse would store ${EXT}.middleware.operations.__proto__ for GET /a, ` +
          'a member name a request body may not hold: give the operation another operationId',
      });
      expect((await gw().get(`/gateway/apis/oas/${id}`)).body).toEqual(before);
      // the operationId itself is fine where nothing is keyed by it, and what is stored can be sent back
      expect((await gw().patch(`/gateway/apis/oas/${id}?upstreamURL=http%3A%2F%2Fup`, body)).status).toBe(200);
      body.paths['/a'].get.operationId = 'getA';
      expect((await gw().patch(`/gateway/apis/oas/${id}?allowList=true`, body)).status).toBe(200);
      const read = (await gw().get(`/gateway/apis/oas/${id}`)).body;
      expect(Object.keys(read[EXT].middleware.operations)).toEqual(['getA', 'constructor']);
      expect((await gw().put(`/gateway/apis/oas/${id}`, read)).status).toBe(200);
    });

    it('refuses import parameters that would grow the definition past the request body limit', async () => {
      const id = await createApi(t, stored());
      const body = oasDoc();
      delete body[EXT];
      body.paths = {};
      // operations every per-operation parameter fits: a parameter, and a response with an example (through refs)
      const get = {
        parameters: [{ $ref: '#/components/parameters/q' }],
        responses: { 200: { $ref: '#/components/responses/r' } },
      };
      for (let i = 0; i < 4000; i++) body.paths[`/p${i}`] = { get };
      body.components = {
        parameters: { q: { name: 'q', in: 'query', schema: { type: 'string' } } },
        responses: { r: { description: 'ok', content: { 'text/plain': { example: 'x' } } } },
      };
      expect(JSON.stringify(body).length).toBeLessThan(512 * 1024);
      expect((await gw().patch(`/gateway/apis/oas/${id}`, body)).status).toBe(200);
      const before = (await gw().get(`/gateway/apis/oas/${id}`)).body;
      const refused = await gw().patch(
        `/gateway/apis/oas/${id}?allowList=true&validateRequest=true&mockResponse=true`,
        body,
      );
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(
        /^the definition would be stored as 1\d{6} bytes of JSON, more than the 1048576 bytes a request body may hold, so it could not be sent back as read$/,
      );
      expect((await gw().get(`/gateway/apis/oas/${id}`)).body).toEqual(before);
      // what fits is stored, and can be sent back as read
      expect((await gw().patch(`/gateway/apis/oas/${id}?allowList=true`, body)).status).toBe(200);
      const read = await gw().get(`/gateway/apis/oas/${id}`);
      expect(read.text.length).toBeGreaterThan(600 * 1024);
      expect((await gw().put(`/gateway/apis/oas/${id}`, read.body)).status).toBe(200);
    });

    it('shows the change in the dashboard list entry at once', async () => {
      const admin = await seedUser(t, { org: 'orgS' });
      const id = await createApi(t, stored());
      const body = oasDoc();
      delete body[EXT];
      await gw().patch(`/gateway/apis/oas/${id}?listenPath=%2Fmoved%2F&upstreamURL=http%3A%2F%2Fmoved`, body);
      const list = await admin.http.get('/api/apis');
      const entry = list.body.apis.find((a: any) => a.api_definition.api_id === id).api_definition;
      expect(entry.proxy).toEqual({ listen_path: '/moved/', strip_listen_path: false, target_url: 'http://moved' });
      expect(entry.name).toBe('Stored');
    });
  });
});
