import { FilterNode, Scalar } from './event-filter';
import { PortableMatcher, toMatcher } from './filter-regex';

/**
 * Whether an event (the envelope as delivered: Event, Message, Timestamp) passes a filter, read exactly as
 * fan-out reads it in PostgreSQL (filter-jsonpath.ts compiles the same tree to a lax jsonpath): a key step
 * into an array looks into each of its elements (one level), and a rule on a value that is an array holds
 * when it holds for one of its elements (one level, twice: lax jsonpath unwraps for the filter and again for
 * the comparison). A rule on a missing path or a value of another type is false, never an error.
 */
export function matchesFilter(filter: FilterNode, event: unknown): boolean {
  const regexes = new Map<FilterNode, PortableMatcher>();
  const test = (node: FilterNode): boolean => {
    switch (node.kind) {
      case 'all':
        return node.rules.every(test);
      case 'any':
        return node.rules.some(test);
      case 'not':
        return !test(node.rule);
      case 'exists':
        return resolve(event, node.path).length > 0 === node.present;
      case 'eq':
      case 'in':
        return some(event, node.path, (v) => node.values.some((x) => equal(v, x)));
      case 'cmp':
        return some(event, node.path, (v) => compare(v, node.op, node.value));
      case 'prefix':
        return some(event, node.path, (v) => typeof v === 'string' && v.startsWith(node.value));
      case 'regex': {
        let re = regexes.get(node);
        if (!re) regexes.set(node, (re = toMatcher(node.regex)));
        return some(event, node.path, (v) => typeof v === 'string' && re.test(v));
      }
    }
  };
  return test(filter);
}

/** The items a lax jsonpath `$."k1"."k2"...` selects. */
function resolve(root: unknown, path: string[]): unknown[] {
  let items: unknown[] = [root];
  for (const key of path) {
    const next: unknown[] = [];
    for (const item of items) {
      for (const el of Array.isArray(item) ? item : [item]) {
        if (isObject(el) && Object.prototype.hasOwnProperty.call(el, key)) next.push(el[key]);
      }
    }
    items = next;
  }
  return items;
}

/** `exists(<path> ? (<predicate on @>))` in lax mode: unwrapped once for the filter, once more for the predicate. */
function some(root: unknown, path: string[], predicate: (v: unknown) => boolean): boolean {
  for (const item of resolve(root, path)) {
    for (const at of Array.isArray(item) ? item : [item]) {
      for (const v of Array.isArray(at) ? at : [at]) if (predicate(v)) return true;
    }
  }
  return false;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function equal(v: unknown, x: Scalar): boolean {
  if (x === null || v === null) return v === x;
  return typeof v === typeof x && v === x;
}

function compare(v: unknown, op: '>' | '>=' | '<' | '<=', x: number | string): boolean {
  if (typeof v !== typeof x) return false;
  const c = typeof x === 'number' ? Math.sign((v as number) - x) : codePointOrder(v as string, x);
  switch (op) {
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
  }
}

/** Strings compare by Unicode code point, as jsonpath compares them (not by UTF-16 unit as `<` does). */
function codePointOrder(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return Math.sign(d);
  }
}
