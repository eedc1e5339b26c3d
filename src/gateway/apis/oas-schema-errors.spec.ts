import { validate } from '@readme/openapi-parser';
import AjvCore from 'ajv/dist/core';
import { firstReasons, MAX_REASONS } from '../../common/errors/reasons';
import { locateErrors } from './oas-error-location';
import { manySchemaErrors, PRECHECK_FROM_CHARS, reuseCompiledSchemas } from './oas-schema-errors';
import { OasValidationPool } from './oas-validation.pool';

/** A description long enough to take a document past PRECHECK_FROM_CHARS. */
const LONG = 'x'.repeat(PRECHECK_FROM_CHARS);

/** `n` operations each answering `responses: {}` (one schema error each), 34 bytes per error. */
const emptyResponses = (n: number, openapi = '3.0.3', description = LONG) => ({
  openapi,
  info: { title: 'x', version: '1', description },
  paths: Object.fromEntries(Array.from({ length: n }, (_, i) => [`/p${i}`, { get: { responses: {} } }])),
});

/** Schema errors of several kinds, some behind a $ref, in several places of the document. */
const mixed = (openapi: string) => ({
  openapi,
  info: { title: 'x', version: '1', description: LONG, contact: { url: 5 }, extra: true },
  tags: Array.from({ length: 25 }, (_, i) => (i % 2 ? {} : { name: 5 })),
  servers: [{ url: 'https://a.example', variables: { v: { enum: [] } } }, { description: 'no url' }],
  paths: Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [
      `/p${i}`,
      {
        get: {
          parameters: [{ name: 'q', in: i % 2 ? 'nowhere' : 'query' }],
          responses: i % 3 ? { 200: { $ref: '#/components/responses/Bad' } } : {},
        },
      },
    ]),
  ),
  components: { responses: { Bad: { content: {} } }, schemas: { S: { type: 'array', items: 'no' } } },
  security: {},
});

/** The parser's own answer, as the validator tells it (every error printed, then the first 20 told). */
async function parsersAnswer(doc: object): Promise<string[]> {
  const result = await validate(structuredClone(doc) as never, { resolve: { external: false, file: false } });
  if (result.valid) return [];
  // `validate` dereferences its argument in place: locate against a second, dereferenced, copy
  const printed = structuredClone(doc);
  await validate(printed as never, { resolve: { external: false, file: false } });
  return firstReasons(
    locateErrors(
      result.errors.map((e) => e.message),
      printed,
    ),
    result.additionalErrors,
  );
}

describe('manySchemaErrors', () => {
  it.each(['3.0.3', '3.1.0'])(
    'tells the first errors of OpenAPI %s as the parser does, and how many more',
    async (v) => {
      const doc = mixed(v);
      const expected = await parsersAnswer(doc);
      expect(expected.length).toBe(MAX_REASONS + 1);
      const many = await manySchemaErrors(doc, MAX_REASONS);
      expect(many).toBeDefined();
      expect(firstReasons(locateErrors(many!.messages, many!.doc), many!.more)).toEqual(expected);
      // the request's document is not dereferenced
      expect(doc.paths['/p1'].get.responses).toEqual({ 200: { $ref: '#/components/responses/Bad' } });
    },
  );

  it('leaves a document with at most as many errors as are told, or a small one, to the parser', async () => {
    expect(await manySchemaErrors(emptyResponses(MAX_REASONS), MAX_REASONS)).toBeUndefined();
    expect(await manySchemaErrors(emptyResponses(0), MAX_REASONS)).toBeUndefined();
    expect(await manySchemaErrors(emptyResponses(MAX_REASONS + 1), MAX_REASONS)).toBeDefined();
    // the same errors in a small document: the parser prints them all in no time
    expect(await manySchemaErrors(emptyResponses(MAX_REASONS + 1, '3.0.3', ''), MAX_REASONS)).toBeUndefined();
  });

  it('leaves a dangling $ref, a path without a leading slash and OpenAPI 3.2 to the parser', async () => {
    const dangling = emptyResponses(30);
    Object.assign(dangling, { components: { schemas: { A: { $ref: '#/components/schemas/B' } } } });
    const slash = emptyResponses(30);
    Object.assign(slash.paths, { nope: {} });
    for (const doc of [dangling, slash, emptyResponses(30, '3.2.0')])
      expect(await manySchemaErrors(doc, MAX_REASONS)).toBeUndefined();
  });

  it('prints only the errors it tells', async () => {
    const many = await manySchemaErrors(emptyResponses(3000), MAX_REASONS);
    expect(many?.messages).toHaveLength(MAX_REASONS);
    expect(many?.more).toBe(3000 - MAX_REASONS);
  });
});

describe('reuseCompiledSchemas', () => {
  it('has the parser answer as before, valid or not, OpenAPI 3.0 or 3.1, without compiling the schema again', async () => {
    const docs = ['3.0.3', '3.1.0'].flatMap((v) => [
      { openapi: v, info: { title: 'x', version: '1' }, paths: {} },
      { ...mixed(v), info: { title: 'x', version: '1', contact: { url: 5 } } },
      emptyResponses(3, v, ''),
      { openapi: v, info: { title: 'x', version: '1' }, paths: {}, webhooks: {} },
    ]);
    const answers = async () => {
      const out = [];
      for (const doc of docs)
        out.push(await validate(structuredClone(doc) as never, { resolve: { external: false, file: false } }));
      return out;
    };
    const before = await answers();
    expect(before.filter((a) => a.valid).length).toBeGreaterThan(0);
    expect(before.filter((a) => !a.valid).length).toBeGreaterThan(4);
    reuseCompiledSchemas();
    expect(await answers()).toEqual(before);
    const compile = jest.spyOn(AjvCore.prototype, 'compile');
    try {
      expect(await answers()).toEqual(before);
      expect(compile).not.toHaveBeenCalled();
    } finally {
      compile.mockRestore();
    }
  });
});

describe('validation of a document with many schema errors', () => {
  const pool = new OasValidationPool();
  afterAll(() => pool.onApplicationShutdown());

  // the parser printed all 12,000 errors of this 400 KB document, each with a frame of the whole of it: past the
  // 10 s a document may take on its thread, so it was refused as 'not validated within 10 s' (about 0.5 s now)
  it('tells the first 20 of 12,000 and how many more, within the service’s own limit', async () => {
    const reasons = await pool.reasons(emptyResponses(12_000, '3.0.3', ''));
    expect(reasons).toHaveLength(MAX_REASONS + 1);
    expect(reasons[0]).toBe('paths./p0.get.responses: MINPROPERTIES must NOT have fewer than 1 properties');
    expect(reasons[19]).toBe('paths./p19.get.responses: MINPROPERTIES must NOT have fewer than 1 properties');
    expect(reasons[20]).toBe('and 11980 more error(s)');
  }, 30_000);
});
