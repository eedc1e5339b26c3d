import type { OpenAPIObject } from '@nestjs/swagger';
import { IDEMPOTENCY_KEY_HEADER, MAX_IDEMPOTENCY_KEY_LENGTH, REPLAYED_HEADER } from './idempotency-key';
import { takesIdempotencyKey } from './idempotent-requests';

const DESCRIPTION =
  'Makes a retry safe: the first answer to a request with this key is stored with its change and given again, ' +
  `byte for byte and with \`${REPLAYED_HEADER}: true\`, to a repeat of the same request (same method, path, query ` +
  'and body) within IDEMPOTENCY_KEY_TTL (24 h by default). A quoted string (`"8e03978e-..."`) or a bare run of ' +
  `visible ASCII, at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters; keys are the caller's own. The same key with a ` +
  'different request: 422; a repeat while the first request still runs: 409. Validation failures and 5xx answers ' +
  'are not stored.';

/**
 * Documents the Idempotency-Key header on every operation that takes it (the same rule IdempotentRequests applies,
 * so a route added later is documented without a decorator of its own), with the 409 and 422 it may cause and
 * the replay header of its answers.
 */
export function documentIdempotencyKey(document: OpenAPIObject): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!operation || typeof operation !== 'object' || !('responses' in operation)) continue;
      if (!takesIdempotencyKey(method, path)) continue;
      operation.parameters = [
        ...(operation.parameters ?? []),
        {
          name: IDEMPOTENCY_KEY_HEADER,
          in: 'header',
          required: false,
          description: DESCRIPTION,
          schema: {
            type: 'string',
            maxLength: MAX_IDEMPOTENCY_KEY_LENGTH + 2,
            example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
          },
        },
      ];
      const responses = operation.responses as Record<string, { description?: string; headers?: object }>;
      for (const [status, response] of Object.entries(responses)) {
        if (!/^2\d\d$/.test(status)) continue;
        response.headers = {
          ...response.headers,
          [REPLAYED_HEADER]: {
            description: `\`true\` when this is the stored answer to an earlier request with the same ${IDEMPOTENCY_KEY_HEADER}`,
            schema: { type: 'string', enum: ['true'] },
          },
        };
      }
      note(responses, '409', `${IDEMPOTENCY_KEY_HEADER}: a request with the same key is still in progress`);
      note(responses, '422', `${IDEMPOTENCY_KEY_HEADER}: the key was already used for a different request`);
    }
  }
}

/** Adds `text` to the description of the `status` answer, creating it if the operation had none. */
function note(responses: Record<string, { description?: string }>, status: string, text: string): void {
  const existing = responses[status]?.description;
  responses[status] = { ...responses[status], description: existing ? `${existing}; or: ${text}` : text };
}
