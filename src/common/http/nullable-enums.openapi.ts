import type { OpenAPIObject } from '@nestjs/swagger';

type Schema = { nullable?: unknown; type?: unknown; enum?: unknown[]; allOf?: unknown[]; anyOf?: unknown[] };

/** Calls `edit` on every object of the document, parents before their members. */
function eachObject(document: OpenAPIObject, edit: (node: Schema) => void): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!node || typeof node !== 'object') return;
    edit(node);
    Object.values(node).forEach(visit);
  };
  visit(document);
}

/**
 * A nullable member with an enum lists null among its values: OpenAPI 3.0.3 lets `nullable` add null to the types
 * but not to an enum, so a strict validator (ajv's) refused `DisabledReason: null` against `enum: [gone, ...]`.
 */
export function listNullInNullableEnums(document: OpenAPIObject): void {
  eachObject(document, (schema) => {
    // a new array: the document holds the very arrays the DTOs give (WEBHOOK_METHODS, which @IsIn validates with too)
    if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null))
      schema.enum = [...schema.enum, null];
  });
}

/**
 * A nullable member that names its schema by `$ref` (Nest writes `{nullable: true, allOf: [{$ref}]}`) admits null:
 * OpenAPI 3.0.3's `nullable` does not reach into `allOf`, so a strict validator (ajv's) refused `LastFailure: null`
 * against the referenced object. It becomes `anyOf` the reference or null.
 */
export function admitNullInNullableRefs(document: OpenAPIObject): void {
  eachObject(document, (schema) => {
    if (schema.nullable === true && Array.isArray(schema.allOf) && schema.allOf.length === 1) {
      schema.anyOf = [schema.allOf[0], { type: schema.type ?? 'object', nullable: true, enum: [null] }];
      delete schema.allOf;
    }
  });
}
