import {
  bodyEncodingViolation,
  inputViolation,
  isRefusedMember,
  isStorableText,
  MAX_INPUT_DEPTH,
  MAX_OBJECT_MEMBERS,
  queryEncodingViolation,
  repeatedQueryParameters,
  requestInputViolation,
} from './input-policy';

describe('input policy', () => {
  it('refuses NUL and unpaired surrogates, keeps paired ones and everything else', () => {
    for (const bad of ['\u0000', 'a\u0000', '\ud800', 'x\ud800y', '\udc00', '\udc00\ud800'])
      expect([bad, isStorableText(bad)]).toEqual([bad, false]);
    for (const good of ['', 'plain', '\ud83d\ude00 emoji', 'é', '\u2028', '%00', '\\u0000'])
      expect([good, isStorableText(good)]).toEqual([good, true]);
  });

  it('knows the member names the JSON body parser refuses', () => {
    expect(isRefusedMember('__proto__', {})).toBe(true);
    expect(isRefusedMember('__proto__', 1)).toBe(true);
    expect(isRefusedMember('constructor', { prototype: {} })).toBe(true);
    expect(isRefusedMember('constructor', { allow: { enabled: true } })).toBe(false);
    expect(isRefusedMember('constructor', null)).toBe(false);
    for (const name of ['prototype', 'proto', '__proto', 'toString', 'hasOwnProperty'])
      expect([name, isRefusedMember(name, { prototype: {} })]).toEqual([name, false]);
  });

  it('names the field where the bad string is', () => {
    expect(inputViolation({ Name: 'a', Headers: [{ Name: 'X', Value: 'b\u0000' }] }, '')).toBe(
      'Headers[0].Value must not contain NUL characters or unpaired UTF-16 surrogates',
    );
    expect(inputViolation([{ path: '\ud800' }], '')).toBe(
      'body[0].path must not contain NUL characters or unpaired UTF-16 surrogates',
    );
    expect(inputViolation({ 'a\u0000': 1 }, '')).toBe(
      'body has a member name that must not contain NUL characters or unpaired UTF-16 surrogates',
    );
    expect(inputViolation({ ok: [1, true, null, 'x'] }, '')).toBeUndefined();
  });

  it(`refuses nesting deeper than ${MAX_INPUT_DEPTH} levels without overflowing on any depth`, () => {
    const nest = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = i % 2 ? { a: v } : [v];
      return v;
    };
    expect(inputViolation(nest(MAX_INPUT_DEPTH), '')).toBeUndefined();
    expect(inputViolation(nest(MAX_INPUT_DEPTH + 1), '')).toBe(`body is nested deeper than ${MAX_INPUT_DEPTH} levels`);
    expect(inputViolation(nest(1_000_000), '')).toBe(`body is nested deeper than ${MAX_INPUT_DEPTH} levels`);
  });

  it(`refuses an object of more than the members it is given (MAX_OBJECT_MEMBERS outside the gateway), naming it`, () => {
    const wide = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(inputViolation(wide(MAX_OBJECT_MEMBERS), '', MAX_OBJECT_MEMBERS)).toBeUndefined();
    expect(inputViolation({ Event: { Message: wide(MAX_OBJECT_MEMBERS + 1) } }, '', MAX_OBJECT_MEMBERS)).toBe(
      `Event.Message has more than ${MAX_OBJECT_MEMBERS} members`,
    );
    expect(inputViolation(wide(200_000), '')).toBeUndefined();
  });

  it('checks path parameters and query values too', () => {
    expect(requestInputViolation({ params: { apiID: '\u0000' }, query: {}, body: undefined })).toBe(
      'path parameter apiID must not contain NUL characters or unpaired UTF-16 surrogates',
    );
    expect(requestInputViolation({ params: {}, query: { q: ['a', 'b\ud800'] }, body: undefined })).toBe(
      'query parameter q[1] must not contain NUL characters or unpaired UTF-16 surrogates',
    );
    expect(requestInputViolation({ params: { id: '1' }, query: { p: '2' }, body: { Name: 'x' } })).toBeUndefined();
  });

  it('takes a body only as uncompressed JSON in UTF-8, and any request without one', () => {
    const json = { 'content-type': 'application/json', 'content-length': '2' };
    for (const ok of [
      json,
      { ...json, 'content-type': 'application/json;charset=utf-8' },
      { ...json, 'content-type': 'APPLICATION/JSON; Charset="UTF-8"' },
      { ...json, 'content-encoding': 'identity' },
      { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      { 'content-type': 'application/json', 'transfer-encoding': ' Chunked' },
      { 'content-type': 'text/plain' }, // no body
      { 'content-type': 'text/plain', 'content-length': '0' },
      {},
    ])
      expect([ok, bodyEncodingViolation(ok)]).toEqual([ok, undefined]);
    const chunked = { 'transfer-encoding': 'chunked' };
    for (const [bad, reason] of [
      [chunked, 'the body must be JSON: send Content-Type: application/json'],
      [
        { ...chunked, 'content-type': 'application/x-www-form-urlencoded' },
        'the body must be JSON: send Content-Type: application/json',
      ],
      [{ ...json, 'content-type': 'application/jsonx' }, 'the body must be JSON: send Content-Type: application/json'],
      [
        { ...json, 'content-type': 'application/json; charset=latin1' },
        'the body must be JSON in UTF-8 (charset=utf-8, or no charset)',
      ],
      [
        { ...json, 'content-encoding': 'deflate' },
        'Content-Encoding "deflate" is not supported: send the body uncompressed',
      ],
      [
        { ...json, 'transfer-encoding': 'gzip, chunked' },
        'Transfer-Encoding "gzip, chunked" is not supported: send the body uncompressed, chunked or with a Content-Length',
      ],
    ] as const)
      expect([bad, bodyEncodingViolation(bad)]).toEqual([bad, reason]);
  });

  it('names every query parameter given more than once', () => {
    expect(repeatedQueryParameters({ p: '1', q: ['a', 'b'], 'x y': ['1', '1'] })).toEqual([
      'q is given more than once',
      '"x y" is given more than once',
    ]);
    for (const none of [{}, { p: '1' }, null, undefined]) expect(repeatedQueryParameters(none)).toEqual([]);
  });

  it('takes text/plain as JSON only when told to (the gateway family)', () => {
    const text = { 'content-length': '2', 'content-type': 'text/plain; charset=utf-8' };
    expect(bodyEncodingViolation(text)).toBe('the body must be JSON: send Content-Type: application/json');
    expect(bodyEncodingViolation(text, undefined, true)).toBeUndefined();
    expect(bodyEncodingViolation({ ...text, 'content-type': 'text/plain; charset=latin1' }, undefined, true)).toBe(
      'the body must be JSON in UTF-8 (charset=utf-8, or no charset)',
    );
    expect(bodyEncodingViolation({ ...text, 'content-type': 'text/html' }, undefined, true)).toBe(
      'the body must be JSON: send Content-Type: application/json',
    );
  });

  it('reads a query string only as UTF-8 percent-escapes', () => {
    for (const ok of ['/api/apis', '/api/apis?q=caf%C3%A9', '/api/apis?q=%25&p=1', '/api/apis?q=a+b', '/x%FF'])
      expect([ok, queryEncodingViolation(ok)]).toEqual([ok, undefined]);
    for (const bad of ['/api/apis?q=%FF', '/api/apis?q=%C3', '/api/apis?q=%E0%80%80'])
      expect([bad, queryEncodingViolation(bad)]).toEqual([
        bad,
        'the query string holds a percent-escape that is not UTF-8',
      ]);
    for (const bad of ['/api/apis?q=%', '/a?b=%zz', '/a?b=%G1', '/a?b=%C3%A', '/a?b=%FF%'])
      expect([bad, queryEncodingViolation(bad)]).toEqual([bad, 'the query string holds a malformed percent-escape']);
  });
});
