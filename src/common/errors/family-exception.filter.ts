import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, DatabaseTimedOut, DatabaseUnavailable, ServiceBusy, ValidationFailed } from './api-error';
import { Family, familyOf, renderErrorBody, validationStatus } from './families';
import { answeredByIdempotency } from '../idempotency/keyed-request';
import { databaseAway, driverErrorOf, statementCancelled } from '../../database/database-away';

interface ErrorReply {
  status: number;
  messages: string[];
}

const logger = new Logger('Errors');

/**
 * pg-pool's errors when no connection came within its wait (connectionTimeoutMillis): none of the pool's came free, or
 * a new one was not opened in time.
 */
const POOL_WAIT_EXCEEDED = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
]);

/**
 * The error a caller is told of: a wait for a database connection that ran out is the service's overload (503), and a
 * database away for a moment is a 503 too (with Retry-After, so that clients and proxies try again).
 */
function asAnswered(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof HttpException) return error;
  if (POOL_WAIT_EXCEEDED.has(error.message)) {
    logger.warn('a request waited for a database connection in vain: the service is overloaded (503)');
    return new ServiceBusy();
  }
  // pg's own message, also when TypeORM wrapped the error (its message then starts with the error's class name)
  const cause = driverErrorOf(error);
  const reason = cause instanceof Error ? cause.message : error.message;
  if (statementCancelled(error)) {
    logger.warn(`a database statement ran past its time and was cancelled (503): ${reason}`);
    return new DatabaseTimedOut();
  }
  // the only connections a request opens itself are the database's
  if (databaseAway(error)) {
    logger.warn(`the database is away for the moment (503): ${reason}`);
    return new DatabaseUnavailable();
  }
  return error;
}

/** Maps anything thrown to the status and reasons a caller may see. Unexpected errors: generic 500, details logged. */
export function describeError(error: unknown, family: Family): ErrorReply {
  if (error instanceof ValidationFailed) {
    const messages = error.prefix ? [error.prefix, ...error.messages] : error.messages;
    return { status: validationStatus(family), messages };
  }
  if (error instanceof ApiError) return { status: error.getStatus(), messages: error.messages };
  // nobody is left to answer, and nothing went wrong here: no error logged (any client could fill the log with them)
  if (isClientAbort(error)) return { status: HttpStatus.BAD_REQUEST, messages: [CLIENT_ABORT] };
  if (error instanceof HttpException) {
    const res = error.getResponse();
    // Nest hands Fastify's own errors (body parsing, size limits) over as HttpException(message, status).
    if (typeof res === 'string') return fastifyClientError(error.getStatus(), res, family);
    const m = (res as { message?: unknown }).message;
    return { status: error.getStatus(), messages: Array.isArray(m) ? m.map(String) : [String(m ?? error.message)] };
  }
  logger.error({ err: error }, 'unexpected error');
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, messages: ['Internal server error'] };
}

const CLIENT_ABORT = 'the client closed the connection before its body arrived';

/** Node's error on a request's body stream when its client closes the connection before sending all of it. */
function isClientAbort(error: unknown): boolean {
  return (
    error instanceof Error && error.message === 'aborted' && (error as NodeJS.ErrnoException).code === 'ECONNRESET'
  );
}

function fastifyClientError(status: number, message: string, family: Family): ErrorReply {
  if (status === 413) return { status, messages: ['request body too large'] };
  if (status === 415) return { status, messages: ['unsupported Content-Type: send application/json'] };
  if (status === 400 && /JSON/i.test(message)) {
    return {
      status: validationStatus(family),
      messages: [family === 'gateway' ? 'request malformed' : 'request body is not valid JSON'],
    };
  }
  return { status, messages: [message] };
}

export function sendFamilyError(request: FastifyRequest, reply: FastifyReply, thrown: unknown): void {
  const family = familyOf(request.url);
  const error = asAnswered(thrown);
  if (family === 'other' && error instanceof HttpException && typeof error.getResponse() === 'object') {
    // health checks and the like keep their own structured body
    void reply.status(error.getStatus()).send(error.getResponse());
    return;
  }
  const { status, messages } = describeError(error, family);
  if (error instanceof ApiError)
    for (const [name, value] of Object.entries(error.headers)) void reply.header(name, value);
  void reply
    .status(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(renderErrorBody(family, status, messages));
}

/** The global filter: renders each route family's error body (see families.ts). */
@Catch()
export class FamilyExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const request = ctx.getRequest<FastifyRequest>();
    // a request whose Idempotency-Key is claimed answers once its refusal is stored (or not)
    if (answeredByIdempotency(request, exception)) return;
    sendFamilyError(request, ctx.getResponse<FastifyReply>(), exception);
  }
}
