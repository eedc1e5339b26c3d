import { ApiError } from '../errors/api-error';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency-key';

export enum IdempotencyErrorCode {
  InProgress = 'idempotency_key_in_progress',
  Reused = 'idempotency_key_reused',
}

/** Answers about the key itself, before the operation runs; rendered in the route family's error body. */
export class IdempotencyError extends ApiError {
  constructor(status: number, message: string, code: IdempotencyErrorCode) {
    super(status, message, code);
  }

  /** 409: the first request with this key has not answered yet; the same request may be sent again later. */
  static inProgress(): IdempotencyError {
    return new IdempotencyError(
      409,
      `${IDEMPOTENCY_KEY_HEADER}: a request with this key is still in progress; send it again once that one has answered`,
      IdempotencyErrorCode.InProgress,
    );
  }

  /** 422: the key was used for another request (method, path, query or body differ). */
  static reused(): IdempotencyError {
    return new IdempotencyError(
      422,
      `${IDEMPOTENCY_KEY_HEADER}: this key was already used for a different request (method, path, query or body); use a new key for a new request`,
      IdempotencyErrorCode.Reused,
    );
  }
}
