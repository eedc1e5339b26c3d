/** What `withDeadline` rejects with when the work is not done in time; its message is the time allowed (`2000 ms`). */
export class DeadlineExceeded extends Error {}

/**
 * `promise`, or a rejection with DeadlineExceeded once `ms` have passed. The work itself goes on (a command queued
 * for a Redis that is down is sent once it is back): only the waiting is bounded.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineExceeded(`${ms} ms`)), ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
