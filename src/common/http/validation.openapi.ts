import type { Type } from '@nestjs/common';
import { DECORATORS } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

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
 * `@IsNotEmpty()` its length, `@ArrayNotEmpty`/`@ArrayMinSize`/`@ArrayMaxSize` its number of items (rules with `each`
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
          { ...documented, ...add },
          target.prototype,
          rule.propertyName,
        );
    }
  }
}
