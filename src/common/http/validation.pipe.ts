import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ValidationFailed } from '../errors/api-error';
import { isBodyOptional } from './optional-body.decorator';

/** What a body that is not a JSON object gets: null, an array, a number, a string or a boolean. */
const NOT_AN_OBJECT = 'body: Validation failed (object is expected)';

/**
 * The rules of a field by how much they say, most first: that it must be given, then what type it must be. When one of
 * a tier fails, those of the tiers after it (a type's, then ranges and lengths) say nothing useful. (A field that must
 * be a string says itself that it is required when it is missing: IsRequiredText.)
 */
const RULE_TIERS = [
  new Set(['isDefined']),
  new Set(['isInt', 'isNumber', 'isString', 'isBoolean', 'isArray', 'isObject']),
];

/** The failed rules of a field worth telling: those of its first tier that failed, or all of them. */
function telling(rules: string[]): string[] {
  for (const tier of RULE_TIERS) {
    const failed = rules.filter((rule) => tier.has(rule));
    if (failed.length) return failed;
  }
  return rules;
}

/**
 * Every reason, each once, and of each field only the telling ones: a missing Name "is required" (not also "must be
 * a string"), `"30"` as a Timeout "must be an integer number of seconds" (not also "at least 1", "at most 60"), and
 * an object as Headers "must be an array" (not also what its members lack as a header).
 */
function flatten(errors: ValidationError[], parent = ''): string[] {
  const out = new Set<string>();
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    let wrongType = false;
    if (e.constraints) {
      for (const rule of telling(Object.keys(e.constraints))) {
        wrongType ||= RULE_TIERS[1].has(rule);
        const msg = e.constraints[rule];
        out.add(msg.startsWith(e.property) ? msg.replace(e.property, path) : `${path}: ${msg}`);
      }
    }
    // the members of a value of the wrong type (an object where a list of headers belongs) say nothing more
    if (e.children?.length && !wrongType) for (const msg of flatten(e.children, path)) out.add(msg);
  }
  return [...out];
}

/** Names the stock pipe deletes from every object of a body, whatever they hold, before it validates it. */
const STRIPPED_NAMES = ['constructor', 'prototype'];

/**
 * Where a member named `constructor` or `prototype` sits inside a member of the body (`Options.constructor`), if
 * anywhere. The stock pipe deletes such members unseen, so a free-form map (Options, a Filter, a sample event)
 * would pass validation without them and be stored and acted on without them: `{"Foo": "x"}` as Options is refused,
 * `{"constructor": 1}` would not be. (A top-level one is an unknown member, ignored like any other.)
 */
export function strippedMemberPath(value: unknown, path = ''): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [name, member] of Object.entries(value)) {
    const at = path ? `${path}.${name}` : name;
    if (path && STRIPPED_NAMES.includes(name)) return at;
    const found = strippedMemberPath(member, at);
    if (found) return found;
  }
  return undefined;
}

/** The stock pipe, but for what it lets through as "nothing": a null or missing body and a path parameter's text. */
class FamilyValidationPipe extends ValidationPipe {
  /**
   * The stock pipe validates a null or missing body as {}, so a JSON `null` (or nothing at all) passed as "no
   * change" on an update, and it validates an array or a primitive against the DTO's fields first, so whether
   * `[]` was called "not an object" depended on the route. A body DTO's route takes a JSON object: anything else
   * is refused alike, and a missing body too unless the DTO is marked @OptionalBody().
   */
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && this.toValidate(metadata)) {
      if (value === undefined) {
        if (!isBodyOptional(metadata.metatype)) throw new ValidationFailed(['body is required: a JSON object']);
      } else if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new ValidationFailed([NOT_AN_OBJECT]);
      }
      const stripped = strippedMemberPath(value);
      if (stripped) throw new ValidationFailed([`${stripped}: a member may not be named constructor or prototype`]);
    }
    return super.transform(value, metadata);
  }

  /**
   * Path parameters reach the route's own pipe exactly as sent. The stock pipe would turn a `number`
   * parameter into Number(value) first, and Number(' 1'), Number('1e0') and Number('0x1') are all 1, so
   * `/apps/%201` would name app 1: an id is exactly its digits, and only the id pipe decides that.
   */
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'param') return value;
    return super.transformPrimitive(value, metadata);
  }
}

/** The global pipe: whitelists DTO fields, converts types, and reports every reason at once. */
export function createValidationPipe(): ValidationPipe {
  return new FamilyValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: false,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailed(flatten(errors)),
  });
}
