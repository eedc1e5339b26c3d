import type { MessagePort } from 'node:worker_threads';
import { validateOpenApi } from './oas.validator';

/** What OasValidationPool hands a thread: the body, and a port on which the thread says it has taken the body up. */
export interface ValidationTask {
  body: unknown;
  started: MessagePort;
}

/**
 * The task of an OpenAPI validation thread (OasValidationPool): the reasons `body` is not an OpenAPI 3 document.
 * The body arrives as a structured clone of the request's.
 */
export default function validateInThread({ body, started }: ValidationTask): Promise<string[]> {
  // the pool's time limit runs from here: the wait for a thread, or for the thread to start, is not the document's
  started.postMessage(null);
  started.close();
  return validateOpenApi(body);
}
