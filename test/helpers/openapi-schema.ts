import Ajv, { ValidateFunction } from 'ajv';

/** Keywords whose value is one schema, or a list or map of schemas; any other keyword's value is data. */
const ONE_SCHEMA = ['items', 'not', 'additionalProperties'];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf'];

/**
 * An OpenAPI 3.0 schema as JSON Schema: `nullable: true` becomes a null alternative, `$ref`s point into the document
 * registered as `doc`, and the annotations JSON Schema does not know are dropped.
 */
function jsonSchema(node: any): any {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries<any>(node)) {
    if (key === 'nullable' || key === 'example' || key === 'discriminator' || key === 'xml') continue;
    if (key === '$ref') out.$ref = String(value).replace(/^#/, 'doc#');
    else if (ONE_SCHEMA.includes(key)) out[key] = jsonSchema(value);
    else if (SCHEMA_LIST.includes(key)) out[key] = (value as unknown[]).map(jsonSchema);
    else if (key === 'properties')
      out[key] = Object.fromEntries(Object.entries<any>(value).map(([name, s]) => [name, jsonSchema(s)]));
    else out[key] = value;
  }
  return node.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

/** Validates values against the schemas of an OpenAPI 3.0 document (formats are not checked). */
export class OpenApiSchemas {
  private readonly ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(doc: { components?: { schemas?: Record<string, unknown> } }) {
    const schemas = Object.fromEntries(
      Object.entries(doc.components?.schemas ?? {}).map(([name, s]) => [name, jsonSchema(s)]),
    );
    this.ajv.addSchema({ $id: 'doc', components: { schemas } });
  }

  /** Why `value` does not match the OpenAPI `schema` (ajv's messages, with where), or [] when it does. */
  errors(schema: unknown, value: unknown): string[] {
    const key = JSON.stringify(schema);
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(jsonSchema(schema));
      this.compiled.set(key, validate);
    }
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`);
  }
}
