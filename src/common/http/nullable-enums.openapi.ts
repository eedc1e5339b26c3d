import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * A nullable member with an enum lists null among its values: OpenAPI 3.0.3 lets `nullable` add null to the types
 * but not to an enum, so a strict validator (ajv's) refused `DisabledReason: null` against `enum: [gone, ...]`.
 */
export function listNullInNullableEnums(document: OpenAPIObject): void {
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const schema = node as { nullable?: unknown; enum?: unknown[] };
    if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
    Object.values(node).forEach(visit);
  };
  visit(document);
}
