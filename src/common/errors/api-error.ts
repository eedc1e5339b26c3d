import { HttpException } from '@nestjs/common';

/**
 * An error a caller caused or should see, with one or more human-readable reasons.
 * Features subclass it with their own code enum; the family filter renders it.
 */
export class ApiError extends HttpException {
  readonly messages: string[];

  constructor(
    status: number,
    messages: string | string[],
    readonly code?: string,
    /** Headers the answer carries beside the error body (a 503's Retry-After). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    const list = Array.isArray(messages) ? messages : [messages];
    super(list.join('; '), status);
    this.messages = list;
  }
}

/** A request body, query or path that failed validation: 422 on the portal, 400 elsewhere. */
export class ValidationFailed extends ApiError {
  constructor(
    messages: string[],
    readonly prefix?: string,
  ) {
    super(400, messages, 'validation_failed');
  }
}
