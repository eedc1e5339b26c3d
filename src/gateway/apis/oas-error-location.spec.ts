import { describePath, locateErrors, membersOnLines } from './oas-error-location';

const doc = {
  openapi: '3.0.3',
  info: { title: 'x', version: '1', contact: {} },
  paths: {
    '/a': { get: { tags: [], responses: { 200: { description: 'ok' }, default: { description: 'no' } } } },
    '/b': { post: { parameters: [{ name: 'q', in: 'query' }, 'odd', [1, [2, {}]]], responses: {} } },
  },
  security: {},
  'x-null': null,
  'x-empty': [],
};

describe('membersOnLines', () => {
  it('finds the member printed on every line of the indented JSON, and none on closing lines', () => {
    const printed = JSON.stringify(doc, null, 2).split('\n');
    const all = printed.map((_, i) => i + 1);
    const found = membersOnLines(doc, all);
    printed.forEach((text, i) => {
      const member = found.get(i + 1);
      const bare = text.trim().replace(/,$/, '');
      if (/^[\]}]$/.test(bare)) expect(member).toBeUndefined();
      else expect([i + 1, member?.text]).toEqual([i + 1, bare]);
    });
    expect(found.get(1)).toEqual({ path: [], text: '{' });
    const at = (line: string) => found.get(printed.findIndex((l) => l.trim().startsWith(line)) + 1)?.path;
    expect(at('"security"')).toEqual(['security']);
    expect(at('"200"')).toEqual(['paths', '/a', 'get', 'responses', '200']);
    expect(at('"odd"')).toEqual(['paths', '/b', 'post', 'parameters', 1]);
    expect(at('"in"')).toEqual(['paths', '/b', 'post', 'parameters', 0, 'in']);
  });

  it('stops at the last line asked for, and finds nothing past the end', () => {
    expect(membersOnLines(doc, [2]).get(2)).toEqual({ path: ['openapi'], text: '"openapi": "3.0.3"' });
    expect(membersOnLines(doc, [10_000]).size).toBe(0);
    expect(membersOnLines('text', [1, 2])).toEqual(new Map([[1, { path: [], text: '"text"' }]]));
  });
});

describe('describePath', () => {
  it('joins keys with dots and shows indexes in brackets; the root is the document', () => {
    expect(describePath(['paths', '/a', 'get', 'parameters', 0, 'in'])).toBe('paths./a.get.parameters[0].in');
    expect(describePath([])).toBe('the document');
    expect(describePath([0, 'a'])).toBe('[0].a');
  });
});

describe('locateErrors', () => {
  // the parser's messages, as it wrote them for `doc` above (a frame of JSON.stringify(doc, null, 2))
  const line = (start: string) =>
    JSON.stringify(doc, null, 2)
      .split('\n')
      .findIndex((l) => l.includes(start)) + 1;
  const frame = (start: string, note: string) => {
    const n = line(start);
    const text = JSON.stringify(doc, null, 2).split('\n')[n - 1];
    return `  ${n - 1} |   ...\n> ${n} | ${text}\n     |   ^ ${note}\n  ${n + 1} |   ...`;
  };

  it('puts the place of each error in front, and adds what the note names', () => {
    const messages = [
      `TYPE must be array\n\n${frame('"security"', 'type must be array')}`,
      `MINPROPERTIES must NOT have fewer than 1 properties\n\n${frame('"responses": {}', 'minProperties must NOT have fewer than 1 properties')}`,
      `ADDITIONAL PROPERTY must NOT have additional properties\n\n${frame('"x-null"', 'x-null is not expected to be here!')}`,
      `REQUIRED must have required property 'schema'\n\n${frame('"name": "q"', 'schema is missing here!')}`,
      `ENUM must be equal to one of the allowed values\n(path, header)\n\n${frame('"in"', 'Did you mean header here?')}`,
      `REQUIRED must have required property 'info'\n\n> 1 | {\n    | ^ info is missing here!\n  2 |   "openapi": "3.0.3",`,
    ];
    expect(locateErrors(messages, doc)).toEqual([
      'security: TYPE must be array',
      'paths./b.post.responses: MINPROPERTIES must NOT have fewer than 1 properties',
      'x-null: ADDITIONAL PROPERTY must NOT have additional properties: x-null is not expected to be here',
      "paths./b.post.parameters[0].name: REQUIRED must have required property 'schema'",
      'paths./b.post.parameters[0].in: ENUM must be equal to one of the allowed values (path, header): Did you mean header here?',
      "the document: REQUIRED must have required property 'info'",
    ]);
  });

  it('keeps the headline alone when there is no frame, or its line is not the member printed there', () => {
    expect(locateErrors(['Entries in the OpenAPI `paths` object must begin with a leading slash.'], doc)).toEqual([
      'Entries in the OpenAPI `paths` object must begin with a leading slash.',
    ]);
    const n = line('"security"');
    expect(locateErrors([`TYPE must be array\n\n> ${n} |   "tags": {}\n     |   ^ type must be array`], doc)).toEqual([
      'TYPE must be array',
    ]);
    expect(locateErrors([`TYPE must be array\n\n> 9999 |   "security": {}`], doc)).toEqual(['TYPE must be array']);
  });
});
