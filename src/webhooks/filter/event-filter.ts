import { portableRegex, PortableRegex, RegexRefused } from './filter-regex';

/**
 * A webhook's filter on the events it gets: a small JSON rule language over the event as delivered
 * (`{"Event", "Message", "Timestamp"}`).
 *
 *   {"path": "Message.Plan.Name", "eq": "gold"}              equal (strings, numbers, booleans, null)
 *   {"path": "Event", "in": ["AccessRequestApproved", ...]}  equal to one of
 *   {"path": "Message.ID", "gt" | "gte" | "lt" | "lte": 10}  compared with a number, or a string (by code point)
 *   {"path": "Message.Client", "exists": true}               present (even null), or absent with false
 *   {"path": "Message.Catalogue", "prefix": "cat-"}          a string that starts with
 *   {"path": "Message.Plan.Name", "regex": "^gold", "ignoreCase": true}   a string that matches
 *   {"all": [rule, ...]}, {"any": [rule, ...]}, {"not": rule}
 *
 * Paths are dot-separated object keys from the envelope (first key Event, Message or Timestamp). Where a path
 * meets an array, each element counts (a rule on `Message.ProductIDs` holds when it holds for one of them):
 * exactly how PostgreSQL's lax jsonpath reads it, which is where fan-out evaluates filters.
 */
export type EventFilter = LeafRule | { all: EventFilter[] } | { any: EventFilter[] } | { not: EventFilter };

export type Scalar = string | number | boolean | null;

export type LeafRule = { path: string } & (
  | { eq: Scalar }
  | { in: Scalar[] }
  | { gt: number | string }
  | { gte: number | string }
  | { lt: number | string }
  | { lte: number | string }
  | { exists: boolean }
  | { prefix: string }
  | { regex: string; ignoreCase?: boolean }
);

/** A checked filter: its rules as a tree the evaluators walk, regular expressions already made portable. */
export type FilterNode =
  | { kind: 'all' | 'any'; rules: FilterNode[] }
  | { kind: 'not'; rule: FilterNode }
  | { kind: 'eq' | 'in'; path: string[]; values: Scalar[] }
  | { kind: 'cmp'; path: string[]; op: '>' | '>=' | '<' | '<='; value: number | string }
  | { kind: 'exists'; path: string[]; present: boolean }
  | { kind: 'prefix'; path: string[]; value: string }
  | { kind: 'regex'; path: string[]; regex: PortableRegex };

export const FILTER_LIMITS = {
  /** Nesting of rules, the innermost included: a rule sits under at most depth - 1 levels of all/any/not. */
  depth: 8,
  /** Rules in all, leaves and branches together. */
  rules: 64,
  /** The filter as JSON text. */
  bytes: 8192,
  /** Values of one `in`. */
  inValues: 100,
  /** Keys of one path. */
  pathKeys: 16,
  /** A string operand, or a key. */
  stringLength: 1024,
};

export const ENVELOPE_KEYS = ['Event', 'Message', 'Timestamp'] as const;
const OPERATORS = ['eq', 'in', 'gt', 'gte', 'lt', 'lte', 'exists', 'prefix', 'regex'] as const;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const COMPARISONS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** What is wrong with a filter, and where: `at` names the part, e.g. `Filter.all[1].regex`. */
export class FilterInvalid extends Error {
  constructor(
    readonly at: string,
    readonly reason: string,
  ) {
    super(`${at}: ${reason}`);
  }
}

/** Checks a filter as sent (any JSON) and answers its rule tree; throws FilterInvalid naming the wrong part. */
export function parseEventFilter(input: unknown, at = 'Filter'): FilterNode {
  let text: string;
  try {
    text = JSON.stringify(input);
  } catch {
    throw new FilterInvalid(at, 'must be JSON');
  }
  if (text === undefined) throw new FilterInvalid(at, 'must be an object');
  if (Buffer.byteLength(text) > FILTER_LIMITS.bytes)
    throw new FilterInvalid(at, `must be at most ${FILTER_LIMITS.bytes} bytes as JSON`);
  const counter = { rules: 0 };
  return parseRule(input, at, 1, counter);
}

function parseRule(input: unknown, at: string, depth: number, counter: { rules: number }): FilterNode {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new FilterInvalid(at, 'must be an object: a rule with a path, or all, any or not');
  }
  if (depth > FILTER_LIMITS.depth) {
    throw new FilterInvalid(
      at,
      `nests too deep: rules nest at most ${FILTER_LIMITS.depth} deep, a rule under at most ${FILTER_LIMITS.depth - 1} levels of all, any and not`,
    );
  }
  if (++counter.rules > FILTER_LIMITS.rules) {
    throw new FilterInvalid(at, `is one rule too many: a filter holds at most ${FILTER_LIMITS.rules} rules`);
  }
  const rule = input as Record<string, unknown>;
  const keys = Object.keys(rule);
  for (const branch of ['all', 'any'] as const) {
    if (!(branch in rule)) continue;
    onlyKeys(rule, [branch], at);
    const list = rule[branch];
    if (!Array.isArray(list) || list.length === 0)
      throw new FilterInvalid(`${at}.${branch}`, 'must be a non-empty array of rules');
    return { kind: branch, rules: list.map((r, i) => parseRule(r, `${at}.${branch}[${i}]`, depth + 1, counter)) };
  }
  if ('not' in rule) {
    onlyKeys(rule, ['not'], at);
    return { kind: 'not', rule: parseRule(rule.not, `${at}.not`, depth + 1, counter) };
  }
  if (!('path' in rule)) {
    throw new FilterInvalid(at, `must have a path and one of ${OPERATORS.join(', ')}; or be all, any or not`);
  }
  const path = parsePath(rule.path, `${at}.path`);
  const ops = keys.filter((k) => (OPERATORS as readonly string[]).includes(k));
  if (ops.length !== 1) {
    throw new FilterInvalid(at, `must have exactly one of ${OPERATORS.join(', ')} (has ${ops.join(', ') || 'none'})`);
  }
  const op = ops[0] as (typeof OPERATORS)[number];
  onlyKeys(rule, op === 'regex' ? ['path', 'regex', 'ignoreCase'] : ['path', op], at);
  const value = rule[op];
  const where = `${at}.${op}`;
  switch (op) {
    case 'eq':
      return { kind: 'eq', path, values: [scalar(value, where)] };
    case 'in': {
      if (!Array.isArray(value) || value.length === 0 || value.length > FILTER_LIMITS.inValues)
        throw new FilterInvalid(where, `must be an array of 1 to ${FILTER_LIMITS.inValues} values`);
      return { kind: 'in', path, values: value.map((v, i) => scalar(v, `${where}[${i}]`)) };
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      if (typeof value === 'number' && Number.isFinite(value)) return { kind: 'cmp', path, op: COMPARISONS[op], value };
      if (typeof value === 'string') return { kind: 'cmp', path, op: COMPARISONS[op], value: text(value, where) };
      throw new FilterInvalid(where, 'must be a number or a string');
    case 'exists':
      if (typeof value !== 'boolean') throw new FilterInvalid(where, 'must be true or false');
      return { kind: 'exists', path, present: value };
    case 'prefix':
      if (typeof value !== 'string' || value === '') throw new FilterInvalid(where, 'must be a non-empty string');
      return { kind: 'prefix', path, value: text(value, where) };
    case 'regex': {
      if (typeof value !== 'string') throw new FilterInvalid(where, 'must be a string');
      const ignoreCase = rule.ignoreCase ?? false;
      if (typeof ignoreCase !== 'boolean') throw new FilterInvalid(`${at}.ignoreCase`, 'must be true or false');
      try {
        return { kind: 'regex', path, regex: portableRegex(text(value, where), ignoreCase) };
      } catch (err) {
        if (err instanceof RegexRefused) throw new FilterInvalid(where, err.message);
        throw err;
      }
    }
  }
}

function onlyKeys(rule: Record<string, unknown>, allowed: string[], at: string): void {
  const extra = Object.keys(rule).filter((k) => !allowed.includes(k));
  if (extra.length) throw new FilterInvalid(at, `must not have ${extra.join(', ')} beside ${allowed.join(', ')}`);
}

function parsePath(value: unknown, at: string): string[] {
  if (typeof value !== 'string' || value === '')
    throw new FilterInvalid(at, 'must be a dot-separated path, e.g. Message.Plan.Name');
  const keys = value.split('.');
  if (keys.length > FILTER_LIMITS.pathKeys)
    throw new FilterInvalid(at, `must have at most ${FILTER_LIMITS.pathKeys} keys`);
  if (keys.some((k) => k === ''))
    throw new FilterInvalid(at, 'must not have an empty key (two dots, or a dot at an end)');
  if (!(ENVELOPE_KEYS as readonly string[]).includes(keys[0])) {
    throw new FilterInvalid(at, `must start with ${ENVELOPE_KEYS.join(', ')} (the delivered event's keys)`);
  }
  for (const k of keys) text(k, at);
  return keys;
}

function scalar(value: unknown, at: string): Scalar {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') return text(value, at);
  throw new FilterInvalid(at, 'must be a string, a number, true, false or null');
}

/** Strings go into PostgreSQL's jsonb and jsonpath: no NUL, no lone surrogate halves. */
function text(value: string, at: string): string {
  if (value.length > FILTER_LIMITS.stringLength)
    throw new FilterInvalid(at, `must be at most ${FILTER_LIMITS.stringLength} characters`);
  if (value.includes('\u0000') || LONE_SURROGATE.test(value))
    throw new FilterInvalid(at, 'must not contain NUL or unpaired surrogate characters');
  return value;
}
