import type { Outcome } from './send/retry-policy';

/**
 * The one vocabulary of what became of a delivery attempt, shared by the metrics and the traces so that a
 * dashboard and a trace say the same words: `webhook_delivery_attempts_total{outcome}`,
 * `webhook_attempt_duration_seconds{outcome}` and the attempt span's `webhook.delivery.outcome`.
 * - delivered: a 2xx; the delivery is delivered
 * - retry: it failed and the delivery waits for its next scheduled attempt
 * - failed: it failed and the delivery failed for good (schedule used up, blocked address, a manual attempt)
 * - webhook_disabled: 410 Gone; the webhook was switched off and the delivery failed
 * - superseded: sent, but the answer was not recorded: the claim had lapsed and another worker took it over (and
 *   recorded the attempt as cut off: a timeout)
 */
export const ATTEMPT_OUTCOMES = ['delivered', 'retry', 'failed', 'webhook_disabled', 'superseded'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/**
 * Why an attempt failed: each attempt's `Error` in the delivery log, the metric's `error` label and the attempt
 * span's `error.type` (a non-2xx answer is `http_status`; its code is in `http.response.status_code`). A broker
 * adds `unroutable` (no queue or stream took the message) and `rejected` (the broker refused it); an HTTP request
 * the HTTP client refuses to send (a header stored before header values were checked) is `rejected` too.
 */
export const ATTEMPT_ERRORS = [
  'timeout',
  'connection',
  'blocked_address',
  'http_status',
  'unroutable',
  'rejected',
] as const;
export type AttemptError = (typeof ATTEMPT_ERRORS)[number];

/** The metric's `error` label of an attempt that did not fail (its span has no `error.type`). */
export const NO_ERROR = 'none';

const OF_DECISION: Record<Outcome['kind'], AttemptOutcome> = {
  delivered: 'delivered',
  retry: 'retry',
  final: 'failed',
  disable: 'webhook_disabled',
};

/** The word for what the retry policy decided after an attempt (`superseded` is said when recording finds out). */
export function attemptOutcome(decision: Outcome['kind']): AttemptOutcome {
  return OF_DECISION[decision];
}
