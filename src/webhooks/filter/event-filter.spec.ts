import { FILTER_LIMITS, FilterInvalid, parseEventFilter } from './event-filter';
import { matchesFilter } from './filter-evaluator';
import { toJsonPath } from './filter-jsonpath';

function refusal(input: unknown): string {
  try {
    parseEventFilter(input);
  } catch (err) {
    if (err instanceof FilterInvalid) return err.message;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

function nested(depth: number): unknown {
  let rule: unknown = { path: 'Event', eq: 'x' };
  for (let i = 1; i < depth; i++) rule = { not: rule };
  return rule;
}

describe('parseEventFilter', () => {
  it('names the wrong part of a filter', () => {
    expect(
      refusal({
        all: [
          { path: 'Event', eq: 'x' },
          { path: 'Message.A', regex: '(?:a{1,30}){1,30}' },
        ],
      }),
    ).toBe(
      'Filter.all[1].regex: nests counted repetitions beyond 255 in all (such as (a{1,30}){1,30}, 900): simplify it',
    );
    expect(refusal({ any: [{ path: 'Message.A', gt: true }] })).toBe('Filter.any[0].gt: must be a number or a string');
    expect(refusal({ path: 'Body.A', eq: 1 })).toMatch(/^Filter\.path: must start with Event, Message, Timestamp/);
    expect(refusal({ path: 'Message..A', eq: 1 })).toMatch(/^Filter\.path: must not have an empty key/);
    expect(refusal({ path: 'Message.A', eq: 1, prefix: 'x' })).toBe(
      'Filter: must have exactly one of eq, in, gt, gte, lt, lte, exists, prefix, regex (has eq, prefix)',
    );
    expect(refusal({ path: 'Message.A', like: 'x' })).toMatch(/^Filter: must have exactly one of .* \(has none\)$/);
    expect(refusal({ path: 'Message.A', eq: 1, extra: 2 })).toBe('Filter: must not have extra beside path, eq');
    expect(refusal({ path: 'Message.A', eq: { a: 1 } })).toBe(
      'Filter.eq: must be a string, a number, true, false or null',
    );
    expect(refusal({ path: 'Message.A', in: [] })).toBe('Filter.in: must be an array of 1 to 100 values');
    expect(refusal({ all: [] })).toBe('Filter.all: must be a non-empty array of rules');
    expect(refusal({ not: [] })).toMatch(/^Filter\.not: must be an object/);
    expect(refusal('Event == x')).toMatch(/^Filter: must be an object/);
    expect(refusal({ path: 'Message.A', exists: 'yes' })).toBe('Filter.exists: must be true or false');
    expect(refusal({ path: 'Message.A', prefix: '' })).toBe('Filter.prefix: must be a non-empty string');
    expect(refusal({ path: 'Message.A', eq: 'a\u0000b' })).toMatch(/^Filter\.eq: must not contain NUL/);
    expect(refusal({ path: 'Message.A', eq: '\ud800' })).toMatch(/unpaired surrogate/);
  });

  it('refuses a filter too deep, with too many rules, or too large', () => {
    expect(() => parseEventFilter(nested(FILTER_LIMITS.depth))).not.toThrow();
    expect(refusal(nested(FILTER_LIMITS.depth + 1))).toMatch(/nests too deep/);
    // As the README words it: a rule under 7 levels of all/any/not is taken, under 8 it is not.
    const under = (levels: number) => {
      let rule: unknown = { path: 'Event', eq: 'x' };
      for (let i = 0; i < levels; i++) rule = i % 2 ? { all: [rule] } : { not: rule };
      return rule;
    };
    expect(() => parseEventFilter(under(7))).not.toThrow();
    expect(refusal(under(8))).toBe(
      'Filter.all[0].not.all[0].not.all[0].not.all[0].not: nests too deep: rules nest at most 8 deep, ' +
        'a rule under at most 7 levels of all, any and not',
    );
    const many = { any: Array.from({ length: FILTER_LIMITS.rules }, (_, i) => ({ path: 'Message.ID', eq: i })) };
    expect(refusal(many)).toMatch(/^Filter\.any\[63\]: is one rule too many/);
    expect(refusal({ path: 'Message.A', in: Array.from({ length: 100 }, () => 'x'.repeat(100)) })).toBe(
      `Filter: must be at most ${FILTER_LIMITS.bytes} bytes as JSON`,
    );
  });

  it('refuses regular expressions that one engine would read differently or that nest counts too deep', () => {
    const regex = (r: string) => refusal({ path: 'Message.A', regex: r });
    expect(regex('(a)\\1')).toBe('Filter.regex: must not use backreferences');
    expect(regex('a(?=b)')).toBe('Filter.regex: must not use lookahead or lookbehind');
    expect(regex('\\bword')).toBe('Filter.regex: must not use word boundaries (\\b, \\B)');
    expect(regex('(?<n>a)')).toMatch(/^Filter\.regex: is not a valid regular expression/);
    expect(regex('\\p{L}')).toMatch(/^Filter\.regex: is not a valid regular expression/);
    expect(regex('[')).toBe('Filter.regex: is not a valid regular expression (Unterminated character class)');
    expect(regex('(a')).toBe('Filter.regex: is not a valid regular expression (Unterminated group)');
    expect(regex('a**')).toBe('Filter.regex: is not a valid regular expression (Nothing to repeat)');
    expect(regex('')).toBe('Filter.regex: must not be empty');
    expect(regex('a'.repeat(257))).toBe('Filter.regex: must be at most 256 characters');
    const nested = /^Filter\.regex: nests counted repetitions beyond 255 in all/;
    expect(regex('(?:a{1,30}){1,30}')).toMatch(nested);
    expect(regex('((a{2}){2}){64}')).toMatch(nested);
    expect(regex('(?:[a-z]{1,255}){2}x')).toMatch(nested);
    // within the bound, and repetitions side by side (they add up, they do not multiply)
    for (const ok of ['((a{2}){2}){63}', '(?:[0-9]{1,3}\\.){3}[0-9]{1,3}', 'a{255}b{255}c{255}', '(a+)+$', '(a{0,5})*'])
      expect(() => parseEventFilter({ path: 'Message.A', regex: ok })).not.toThrow();
    expect(regex('a{1,1000}')).toBe('Filter.regex: must not repeat more than 255 times ({n,m})');
    expect(regex('a{300,}')).toBe('Filter.regex: must not repeat more than 255 times ({n,m})');
    // nothing and anything in JavaScript, but not a class at all in PostgreSQL
    expect(regex('[^]')).toBe('Filter.regex: must not use an empty class [] or [^]: use . for any character');
    expect(regex('x[]')).toBe('Filter.regex: must not use an empty class [] or [^]: use . for any character');
  });

  it('takes ordinary and nested repetitions alike, and matches them in time linear in the text', () => {
    const matches = (regex: string, text: string, ignoreCase = false) =>
      matchesFilter(parseEventFilter({ path: 'Message.A', regex, ignoreCase }), { Message: { A: text } });
    // a backtracking engine would try about 2^50 ways on the first three before saying no
    expect(matches('(a|aa)*b', `${'a'.repeat(100)}c`)).toBe(false);
    expect(matches('(a*a*)*b', `${'a'.repeat(100)}c`)).toBe(false);
    expect(matches('(\\w+\\s?)*$', `${'word '.repeat(40)}!`)).toBe(true);
    expect(matches('(a|aa)*b', 'aaab')).toBe(true);
    expect(matches('gol+d', 'a gollld plan')).toBe(true);
    expect(matches('x*y', 'zzz')).toBe(false);
    expect(matches('^[0-9]+-[0-9]+$', '12-345')).toBe(true);
    expect(matches('([a-z]+\\.)*com', 'api.example.com')).toBe(true);
    // read as PostgreSQL reads it: `.` takes a newline and one code point, ^ and $ the whole text
    expect(matches('^a.b$', 'a\nb')).toBe(true);
    expect(matches('^.$', '\u{1F600}')).toBe(true);
    expect(matches('^line$', 'first\nline')).toBe(false);
    expect(matches('^GOLD$', 'gold', true)).toBe(true);
    expect(matches('^GOLD$', 'gold')).toBe(false);
  });

  it('accepts every operator and compiles it to a jsonpath predicate', () => {
    const f = parseEventFilter({
      all: [
        { path: 'Event', in: ['AccessRequestApproved', 'AccessRequestRejected'] },
        { path: 'Message.Plan.Name', regex: '^gold\\d?$', ignoreCase: true },
        { not: { path: 'Message.Client', exists: true } },
        {
          any: [
            { path: 'Message.ID', gte: 10 },
            { path: 'Message.Catalogue', prefix: 'cat-' },
          ],
        },
      ],
    });
    expect(toJsonPath(f)).toBe(
      '(exists($."Event" ? (@ == "AccessRequestApproved" || @ == "AccessRequestRejected")) && ' +
        'exists($."Message"."Plan"."Name" ? (@ like_regex "^gold[0-9]?$" flag "is")) && ' +
        '!(exists($."Message"."Client")) && ' +
        '(exists($."Message"."ID" ? (@ >= 10)) || exists($."Message"."Catalogue" ? (@ starts with "cat-"))))',
    );
    const event = { Event: 'AccessRequestApproved', Message: { Plan: { Name: 'GOLD2' }, ID: 3, Catalogue: 'cat-1' } };
    expect(matchesFilter(f, event)).toBe(true);
    expect(matchesFilter(f, { ...event, Message: { ...event.Message, Client: null } })).toBe(false);
  });

  it('evaluates a filter over a large event quickly enough to answer a test request at once', () => {
    const f = parseEventFilter({ path: 'Message.Text', regex: '^(?:[a-z]+ )+end$' });
    const event = { Message: { Text: 'word '.repeat(20_000) + 'end!' } };
    expect(matchesFilter(f, event)).toBe(false);
  });
});
