import { FilterNode, Scalar } from './event-filter';

/**
 * Compiles a filter to a PostgreSQL jsonpath predicate over the delivered envelope, so that fan-out
 * evaluates it inside the one statement that creates deliveries (`jsonb_path_match(envelope, filter_path)`).
 *
 *   {"path": "Message.A", "eq": 1}          exists($."Message"."A" ? (@ == 1))
 *   {"path": "Message.A", "in": [1, 2]}      exists($."Message"."A" ? (@ == 1 || @ == 2))
 *   {"path": "Message.A", "gte": "m"}        exists($."Message"."A" ? (@ >= "m"))
 *   {"path": "Message.A", "exists": false}   !exists($."Message"."A")
 *   {"path": "Message.A", "prefix": "p"}     exists($."Message"."A" ? (@ starts with "p"))
 *   {"path": "Message.A", "regex": "r"}      exists($."Message"."A" ? (@ like_regex "r" flag "s"))
 *   {"all": [a, b]}, {"any": [a, b]}         (a && b), (a || b)
 *   {"not": a}                               !(a)
 *
 * Every rule is an `exists(...)`, true or false and never unknown (a comparison of values of different types
 * is unknown in jsonpath, but inside a filter it only leaves the item out), so `!` and `||` read as in the
 * JavaScript evaluator.
 */
export function toJsonPath(node: FilterNode): string {
  switch (node.kind) {
    case 'all':
      return `(${node.rules.map(toJsonPath).join(' && ')})`;
    case 'any':
      return `(${node.rules.map(toJsonPath).join(' || ')})`;
    case 'not':
      return `!(${toJsonPath(node.rule)})`;
    case 'exists':
      return `${node.present ? '' : '!'}exists(${path(node.path)})`;
    case 'eq':
    case 'in':
      return `exists(${path(node.path)} ? (${node.values.map((v) => `@ == ${literal(v)}`).join(' || ')}))`;
    case 'cmp':
      return `exists(${path(node.path)} ? (@ ${node.op} ${literal(node.value)}))`;
    case 'prefix':
      return `exists(${path(node.path)} ? (@ starts with ${literal(node.value)}))`;
    case 'regex':
      return `exists(${path(node.path)} ? (@ like_regex ${literal(node.regex.pattern)} flag "${
        node.regex.ignoreCase ? 'is' : 's'
      }"))`;
  }
}

function path(keys: string[]): string {
  return `$${keys.map((k) => `.${literal(k)}`).join('')}`;
}

/** JSON's string and number syntax is jsonpath's too; strings were checked free of NUL and lone surrogates. */
function literal(v: Scalar): string {
  return JSON.stringify(v);
}
