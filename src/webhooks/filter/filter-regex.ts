import { RE2JS } from 're2js';
import { parse } from 'regjsparser';

/** Longest regular expression a filter may hold. */
export const MAX_REGEX_LENGTH = 256;

/**
 * A filter's regular expression, rewritten into the subset that JavaScript (which checks its syntax), RE2 (which
 * the service matches with) and PostgreSQL's `like_regex` read alike: `pattern` is the same text for all, used
 * with RE2's DOTALL (plus case-insensitive) and the jsonpath flags `s` (plus `i`), so `.` and `[^x]` match a
 * newline in both and `^`/`$` anchor the whole string.
 */
export interface PortableRegex {
  pattern: string;
  ignoreCase: boolean;
}

export class RegexRefused extends Error {}

/**
 * The most repetitions counted bounds may multiply to when nested, as in `(?:a{1,30}){1,30}` (900): PostgreSQL
 * compiles each count into states, so nested counts grow its compiled pattern as their product (three nested
 * `{0,10}` took it 0.1 s to compile, `{0,255}` three times is "too complex" for it), and fan-out compiles every
 * filter's pattern again when too many are in use to keep them all. One count alone is bounded to 255 already.
 */
const MAX_NESTED_COUNT = 255;

// Outside a class: the characters that are syntax in either dialect; escaping them means the literal in both.
const SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));
const IN_CLASS = new Set('\\]^-['.split(''));
// \d, \w and \s name different sets in the two engines (PostgreSQL's follow the locale): spelled out here.
const CLASS_ESCAPES: Record<string, string> = {
  d: '0-9',
  w: 'A-Za-z0-9_',
  s: ' \\t\\n\\r\\f\\v',
};

interface Node {
  type: string;
  kind?: string;
  body?: Node[];
  codePoint?: number;
  value?: string;
  negative?: boolean;
  behavior?: string;
}

/**
 * Checks `source` and rewrites it portably; throws RegexRefused with the reason when it uses what one of the
 * engines lacks (backreferences, lookaround, word boundaries, named groups, Unicode properties) or nests counted
 * repetitions beyond MAX_NESTED_COUNT. Neither engine backtracks: PostgreSQL's runs as an automaton, and the
 * service matches with RE2's (toMatcher), so any pattern takes time linear in the text, `(a+)+$` included.
 */
export function portableRegex(source: string, ignoreCase: boolean): PortableRegex {
  if (source.length === 0) throw new RegexRefused('must not be empty');
  if (source.length > MAX_REGEX_LENGTH) throw new RegexRefused(`must be at most ${MAX_REGEX_LENGTH} characters`);
  try {
    // JavaScript's own reading first: its reasons are clear, where the parser below throws its own internal errors
    // on some invalid patterns (`[` gave "Cannot read properties of undefined")
    new RegExp(source, 'u');
  } catch (err) {
    const reason = (err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
    throw new RegexRefused(`is not a valid regular expression (${reason})`);
  }
  let ast: Node;
  try {
    ast = parse(source, 'u', { namedGroups: false, lookbehind: false, unicodePropertyEscape: false });
  } catch (err) {
    throw new RegexRefused(`is not a valid regular expression (${(err as Error).message.split('\n')[0]})`);
  }
  const regex = { pattern: emit(ast), ignoreCase };
  if (nestedCount(ast) > MAX_NESTED_COUNT) {
    throw new RegexRefused(
      `nests counted repetitions beyond ${MAX_NESTED_COUNT} in all (such as (a{1,30}){1,30}, 900): simplify it`,
    );
  }
  try {
    toMatcher(regex); // (what RE2 would not compile is refused here, never met while matching)
  } catch (err) {
    throw new RegexRefused(`is not a valid regular expression (${(err as Error).message})`);
  }
  return regex;
}

/** What the service matches a portable pattern with: RE2's engine (linear in the text, never backtracking). */
export interface PortableMatcher {
  test(text: string): boolean;
}

/** The matcher of a portable pattern, read as PostgreSQL reads it (`.` takes a newline, `^`/`$` the whole text). */
export function toMatcher(r: PortableRegex): PortableMatcher {
  const re = RE2JS.compile(r.pattern, RE2JS.DOTALL | (r.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0));
  return { test: (text) => re.matcher(text).find() };
}

/** The largest product of the counted bounds ({n}, {n,}, {n,m}) nested in one another, anywhere in `n`. */
function nestedCount(n: Node): number {
  const inner = Math.max(1, ...(n.body ?? []).map(nestedCount));
  if (n.type !== 'quantifier') return inner;
  const { min, max } = n as unknown as { min: number; max?: number };
  // *, + and ? count once: only counted bounds multiply the compiled pattern
  return Math.max(1, max ?? min) * inner;
}

function emit(n: Node): string {
  switch (n.type) {
    case 'alternative':
      return n.body!.map(emit).join('');
    case 'disjunction':
      return n.body!.map(emit).join('|');
    case 'value':
      return literal(n.codePoint!, SYNTAX);
    case 'dot':
      return '.';
    case 'anchor':
      if (n.kind === 'start') return '^';
      if (n.kind === 'end') return '$';
      throw new RegexRefused('must not use word boundaries (\\b, \\B)');
    case 'characterClassEscape': {
      const set = CLASS_ESCAPES[n.value!.toLowerCase()];
      if (!set) throw new RegexRefused(`must not use \\${n.value}`);
      return n.value === n.value!.toLowerCase() ? `[${set}]` : `[^${set}]`;
    }
    case 'characterClass':
      // [] and [^] (nothing, anything) are JavaScript's alone: in PostgreSQL a ] first in a class is a literal
      if (n.body!.length === 0)
        throw new RegexRefused('must not use an empty class [] or [^]: use . for any character');
      return `[${n.negative ? '^' : ''}${n.body!.map(classPart).join('')}]`;
    case 'group':
      if (n.behavior === 'normal' || n.behavior === 'ignore') return `(?:${n.body!.map(emit).join('')})`;
      throw new RegexRefused('must not use lookahead or lookbehind');
    case 'quantifier': {
      const body = n.body!.map(emit).join('');
      const { min, max } = n as unknown as { min: number; max?: number };
      // greedy or lazy match the same strings; only whether there is a match counts here
      if (min === 0 && max === undefined) return `${body}*`;
      if (min === 1 && max === undefined) return `${body}+`;
      if (min === 0 && max === 1) return `${body}?`;
      // PostgreSQL counts repetitions up to 255
      if (min > 255 || (max ?? 0) > 255) throw new RegexRefused('must not repeat more than 255 times ({n,m})');
      if (max === undefined) return `${body}{${min},}`;
      return min === max ? `${body}{${min}}` : `${body}{${min},${max}}`;
    }
    case 'reference':
      throw new RegexRefused('must not use backreferences');
    default:
      throw new RegexRefused(`must not use ${n.type}`);
  }
}

function classPart(n: Node): string {
  switch (n.type) {
    case 'value':
      return literal(n.codePoint!, IN_CLASS);
    case 'characterClassRange': {
      const range = n as unknown as { min: Node; max: Node };
      return `${classPart(range.min)}-${classPart(range.max)}`;
    }
    case 'characterClassEscape': {
      const set = CLASS_ESCAPES[n.value!];
      if (!set) throw new RegexRefused(`must not use \\${n.value} inside [...]: use [^...] instead`);
      return set;
    }
    default:
      throw new RegexRefused(`must not use ${n.type} inside [...]`);
  }
}

function literal(codePoint: number, special: Set<string>): string {
  const ch = String.fromCodePoint(codePoint);
  if (special.has(ch)) return `\\${ch}`;
  switch (ch) {
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    case '\f':
      return '\\f';
    case '\v':
      return '\\v';
  }
  if (codePoint < 0x20 || codePoint === 0x7f) throw new RegexRefused('must not contain control characters');
  return ch;
}
