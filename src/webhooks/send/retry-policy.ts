import type { AttemptError } from '../attempt-outcome';

/**
 * What to do after an attempt: no error (a 2xx, or a broker's confirmation) delivered,
 * 410 switches the webhook off, a blocked address fails at once, anything
 * else retries on the schedule until it runs out (a 429's or 503's Retry-After may put a retry off).
 */
export type Outcome =
  | { kind: 'delivered' }
  | { kind: 'disable' } // 410 Gone: the webhook is switched off, the delivery fails
  | { kind: 'final' } // failed for good (schedule exhausted, or the target address is blocked)
  | { kind: 'retry'; delayMs: number };

export interface AttemptResult {
  statusCode: number | null;
  error: AttemptError | null;
  retryAfter?: string | null;
}

/** Upper bound for a subscriber's Retry-After. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;
export const JITTER = 0.2;

/**
 * Decides the outcome of attempt number `attempt` (1-based) given the retry schedule
 * (schedule[0] is the first attempt's delay; schedule[k] the delay before attempt k+1).
 */
export function decide(
  result: AttemptResult,
  attempt: number,
  schedule: number[],
  random: () => number = Math.random,
  now = Date.now(),
): Outcome {
  const code = result.statusCode;
  if (result.error === null) return { kind: 'delivered' };
  if (code === 410) return { kind: 'disable' };
  if (result.error === 'blocked_address') return { kind: 'final' };
  if (attempt >= schedule.length) return { kind: 'final' };
  const scheduled = jitter(schedule[attempt] * 1000, random);
  if ((code === 429 || code === 503) && result.retryAfter) {
    // the subscriber's hint may put the retry off (up to an hour), never bring it forward: a `Retry-After: 0`
    // on every answer would otherwise spend the whole schedule (about 28 hours by default) in a second
    const hinted = parseRetryAfter(result.retryAfter, now);
    if (hinted !== null) return { kind: 'retry', delayMs: Math.max(scheduled, Math.min(hinted, MAX_RETRY_AFTER_MS)) };
  }
  return { kind: 'retry', delayMs: scheduled };
}

export function jitter(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - JITTER + 2 * JITTER * random()));
}

/** Retry-After as delta-seconds or an HTTP date; null when unparsable. */
export function parseRetryAfter(value: string, now = Date.now()): number | null {
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
