import { OasDocument, resolveRef } from './oas-document';

describe('resolveRef', () => {
  const doc: OasDocument = {
    openapi: '3.0.3',
    info: { title: 't', version: '1' },
    paths: {},
    components: {
      securitySchemes: {
        j: { type: 'http', scheme: 'bearer' },
        k: { $ref: '#/components/securitySchemes/j' },
        self: { $ref: '#/components/securitySchemes/self' },
        loopA: { $ref: '#/components/securitySchemes/loopB' },
        loopB: { $ref: '#/components/securitySchemes/loopA' },
      },
    },
    tags: [{ name: 'first' }],
  };

  it('gives a value that is no $ref as it is, and follows local refs to what they point at', () => {
    expect(resolveRef(doc, { type: 'apiKey' })).toEqual({ value: { type: 'apiKey' } });
    expect(resolveRef(doc, undefined)).toEqual({ value: undefined });
    expect(resolveRef(doc, { $ref: '#/components/securitySchemes/k' })).toEqual({
      value: { type: 'http', scheme: 'bearer' },
    });
    expect(resolveRef(doc, { $ref: '#/tags/0/name' })).toEqual({ value: 'first' });
    expect(resolveRef(doc, { $ref: '#' })).toEqual({ value: doc });
  });

  it('names a ref that leads back to itself, to nothing, or outside the document', () => {
    expect(resolveRef(doc, { $ref: '#/components/securitySchemes/self' })).toEqual({
      error: 'its $refs lead in a circle back to #/components/securitySchemes/self',
    });
    expect(resolveRef(doc, { $ref: '#/components/securitySchemes/loopA' })).toEqual({
      error: 'its $refs lead in a circle back to #/components/securitySchemes/loopA',
    });
    for (const ref of ['#/components/securitySchemes/none', '#/tags/1', '#/tags/01', '#/info/title/x', '#/toString'])
      expect(resolveRef(doc, { $ref: ref })).toEqual({ error: `its $ref ${ref} points at nothing in the document` });
    expect(resolveRef(doc, { $ref: 'https://example.com/schemes.json#/k' })).toEqual({
      error: 'its $ref https://example.com/schemes.json#/k is outside the document, which is never read',
    });
    expect(resolveRef(doc, { $ref: '#/%E0%A4%A' })).toEqual({
      error: 'its $ref #/%E0%A4%A is not a valid URI fragment',
    });
  });
});
