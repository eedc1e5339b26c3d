import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a call of the board's API may wait for Redis before it is answered 503. */
export const BOARD_API_DEADLINE_MS = 10_000;

/**
 * The board's API reads and writes the queue in Redis, whose client keeps a command while Redis is away (refusing,
 * frozen, cut off) and sends it once it is back: without a bound, a call waits as long as the outage lasts. Past
 * `ms`, a call still unanswered is answered 503 with `Retry-After: 5`; what it asked for may still be done once Redis
 * is back (its answer then goes nowhere).
 */
export function answerUnavailableAfter(apiPrefix: string, ms = BOARD_API_DEADLINE_MS) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!req.url.startsWith(apiPrefix)) return;
    const timer = setTimeout(() => {
      if (reply.sent) return;
      void reply
        .code(503)
        .header('retry-after', '5')
        .send({ error: `the queue's Redis did not answer within ${ms / 1000} s: try again in 5 s` });
    }, ms);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
  };
}
