import { validateOpenApi } from './oas.validator';

/**
 * The task of an OpenAPI validation thread (OasValidationPool): the reasons `body` is not an OpenAPI 3 document.
 * The body arrives as a structured clone of the request's.
 */
export default function validateInThread(body: unknown): Promise<string[]> {
  return validateOpenApi(body);
}
