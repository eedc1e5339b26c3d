/**
 * Where a request with an Idempotency-Key keeps its idempotency state while it runs (requests without one have
 * none), and the two points of Nest's pipeline that hand over to it: the family guards and the exception filter.
 * (A module of its own, with no imports: the guards and the filter use it, and IdempotentRequests uses both.)
 */
export interface KeyedRequest {
  /** Claims the key once the caller has passed the route's guard, or answers as a repeat. */
  claim(): Promise<void>;
  /** Whether `error`, given to the exception filter, is this request's own to answer. */
  caught(error: unknown): boolean;
}

const KEYED = Symbol('keyedRequest');
type WithKeyed = { [KEYED]?: KeyedRequest };

export function attachKeyedRequest(request: object, keyed: KeyedRequest): void {
  (request as WithKeyed)[KEYED] = keyed;
}

/**
 * The last step of the family guards, once the caller has passed them: claims the request's Idempotency-Key (if it
 * has one), where an interceptor would run. Nothing for a request without the header.
 */
export function claimIdempotencyKey(request: object): Promise<void> | undefined {
  return (request as WithKeyed)[KEYED]?.claim();
}

/**
 * For the exception filter: true when what a keyed request threw is its own to answer (its key was claimed, so
 * the refusal may be stored; or a stored answer is replayed); false when the filter renders it as usual.
 */
export function answeredByIdempotency(request: object, error: unknown): boolean {
  return (request as WithKeyed)[KEYED]?.caught(error) ?? false;
}
