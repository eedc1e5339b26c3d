import type { Type } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { PRINTABLE_TEXT_PATTERN } from './required-text.decorator';

/**
 * Every class-validator rule, by the class that declares it. class-validator keeps them in a map it does not expose;
 * this is the one place that reads it, and it fails loudly should a new version keep them some other way.
 */
export function validationRules(): Map<Type, ValidationMetadata[]> {
  const rules = (getMetadataStorage() as unknown as { validationMetadatas?: unknown }).validationMetadatas;
  // (a Map, but maybe of another realm: Jest runs specs in their own)
  if (Object.prototype.toString.call(rules) !== '[object Map]')
    throw new Error('class-validator keeps its rules elsewhere: update validationRules()');
  return rules as Map<Type, ValidationMetadata[]>;
}

type Schema = Record<string, unknown>;

/**
 * One pattern for a value two rules' patterns both hold for (each searched for in the value, as a schema's pattern is);
 * `a` itself when it already says what `b` says, so running the documentation again changes nothing.
 */
function bothPatterns(a: unknown, b: string): string {
  const part = (p: string) => `(?=[\\s\\S]*?(?:${p}))`;
  if (typeof a !== 'string' || a === b) return b;
  return a.includes(part(b)) ? a : `^${part(a)}${part(b)}`;
}

/** `add` with its pattern, if any, joined to the one `documented` already has there. */
function withPatterns(documented: Schema & { items?: Schema }, add: Schema): Schema {
  if (typeof add.pattern === 'string') return { ...add, pattern: bothPatterns(documented.pattern, add.pattern) };
  const items = add.items as Schema | undefined;
  if (typeof items?.pattern === 'string')
    return { ...add, items: { ...items, pattern: bothPatterns(documented.items?.pattern, items.pattern) } };
  return add;
}

/** What a rule says of one value (of an array's items, for a rule with `each`) or of an array, in schema keywords. */
function keywordsOf(rule: ValidationMetadata, itemType: unknown): { item?: Schema; array?: Schema } | undefined {
  const [first, second] = (rule.constraints ?? []) as unknown[];
  switch (rule.name) {
    case 'isInt':
      return { item: { type: 'integer' } };
    case 'min':
      return { item: { minimum: first } };
    case 'max':
      return { item: { maximum: first } };
    case 'minLength':
      return { item: { minLength: first } };
    case 'maxLength':
      return { item: { maxLength: first } };
    case 'length':
      return { item: second === undefined ? { minLength: first } : { minLength: first, maxLength: second } };
    case 'isNotEmpty':
      // "" is refused: of a string, at least one character
      return itemType === String || itemType === 'string' ? { item: { minLength: 1 } } : undefined;
    case 'isPrintableText':
      return { item: { pattern: PRINTABLE_TEXT_PATTERN } };
    case 'matches':
      // a pattern carries no flags: a rule with some (a case-insensitive one) is left to the description
      return first instanceof RegExp && !first.flags ? { item: { pattern: first.source } } : undefined;
    case 'arrayNotEmpty':
      return { array: { minItems: 1 } };
    case 'arrayMinSize':
      return { array: { minItems: first } };
    case 'arrayMaxSize':
      return { array: { maxItems: first } };
    default:
      return undefined;
  }
}

/**
 * Writes what the class-validator rules of every documented DTO property enforce into its OpenAPI description:
 * `@IsInt()` makes it an integer, `@Min`/`@Max` its minimum and maximum, `@MinLength`/`@MaxLength`/`@Length`/
 * `@IsNotEmpty()` its length, `@ArrayNotEmpty`/`@ArrayMinSize`/`@ArrayMaxSize` its number of items, `@Matches` (without
 * flags) and the required-text rule its pattern, two of them together one pattern both hold for (rules with `each`
 * speak of the items). The values come from the rules themselves, so the document cannot drift from what the service
 * refuses; they win over a value an `@ApiProperty` gives. Undocumented properties stay undocumented. Run before the
 * document is built; running it again changes nothing.
 */
export function documentValidationRules(): void {
  for (const [target, rules] of validationRules()) {
    if (typeof target !== 'function') continue;
    for (const rule of rules) {
      if (rule.target !== target || typeof rule.propertyName !== 'string') continue;
      const documented = Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, target.prototype, rule.propertyName) as
        (Schema & { isArray?: boolean; items?: Schema }) | undefined;
      if (!documented) continue;
      const isArray = documented.isArray === true || documented.type === 'array';
      const keywords = keywordsOf(rule, isArray && documented.items ? documented.items.type : documented.type);
      if (!keywords) continue;
      let add: Schema | undefined;
      // a rule with `each` speaks of an array's items, one without of the value itself
      if (keywords.item && Boolean(rule.each) === isArray)
        // items given in full (an enum's) take them there; otherwise the builder moves them into the items itself
        add = isArray && documented.items ? { items: { ...documented.items, ...keywords.item } } : keywords.item;
      else if (keywords.array && isArray && !rule.each) add = keywords.array;
      if (add)
        Reflect.defineMetadata(
          DECORATORS.API_MODEL_PROPERTIES,
          { ...documented, ...withPatterns(documented, add) },
          target.prototype,
          rule.propertyName,
        );
    }
  }
}
