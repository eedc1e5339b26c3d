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

/** How long a client told the service is busy is asked to wait before it sends the request again. */
export const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * Every connection of the database pool stayed taken for the pool's whole wait (10 s): the service is overloaded, not
 * broken, and the request did nothing. A 503 with Retry-After, so that clients and proxies retry it later.
 */
export class ServiceBusy extends ApiError {
  constructor() {
    super(
      503,
      `the service is busy: no database connection came free in time; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`,
      'service_busy',
      { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) },
    );
  }
}

/**
 * PostgreSQL could not be reached, or is starting up or shutting down (a restart, a failover): the request found the
 * database away for a moment, and what it had not committed was rolled back with its transaction (a connection cut
 * during its COMMIT leaves that unknown, as for any client: a repeat with its Idempotency-Key is safe). A 503 with
 * Retry-After, as for a busy service, rather than an unexpected 500.
 */
export class DatabaseUnavailable extends ApiError {
  constructor() {
    super(
      503,
      `the service cannot reach its database for the moment; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`,
      'database_unavailable',
      { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) },
    );
  }
}

/**
 * A statement of the request ran past DATABASE_STATEMENT_TIMEOUT (waiting for a lock, or on a database that is only
 * slow) and PostgreSQL cancelled it (SQLSTATE 57014, which an operator's pg_cancel_backend gives too): the database
 * is there, and what the request had not committed was rolled back. A 503 with Retry-After, as for a database away,
 * but saying what happened.
 */
export class DatabaseTimedOut extends ApiError {
  constructor() {
    super(
      503,
      `a database statement of this request did not finish in time and was cancelled; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`,
      'database_timeout',
      { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) },
    );
  }
}
