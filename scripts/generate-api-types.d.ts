import type { OpenAPIObject } from '@nestjs/swagger';

/** Where the console's generated API types live. */
export const OUTPUT: string;
/** The generated module's text for an OpenAPI document. */
export function renderApiTypes(document: OpenAPIObject): Promise<string>;
