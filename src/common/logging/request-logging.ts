import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
// nestjs-pino's per-request logger store: its PinoLogger (behind Nest's Logger) logs with the store's logger
import { storage, type Store } from 'nestjs-pino/storage';

/** Credentials and secrets: redacted wherever they appear in a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["admin-auth"]',
  'req.headers["x-gateway-authorization"]',
  'req.headers.cookie',
  '*.password',
  '*.secret',
  '*.Secret',
  '*.Credential',
  '*.OAuthClientSecret',
  '*.DCRRegistrationAccessToken',
  '*.access_key',
];

/** The scheme and authority of a request target in absolute form. */
const AUTHORITY = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;

/**
 * The URL as logged: its path only, the query string replaced by a marker. Callers do put credentials in
 * query strings (`?access_key=...`, even a bare `?<token>`), refused or not, and the log must not keep them.
 */
export function redactUrl(url: string | undefined): string {
  if (!url) return '';
  // a target in absolute form (`http://user:pass@host/path`) is logged by its path too: no user, password or host
  let path = url.replace(AUTHORITY, '');
  if (path !== url && !path.startsWith('/')) path = `/${path}`;
  const q = path.indexOf('?');
  return q < 0 ? path : `${path.slice(0, q)}?[redacted]`;
}

/** What a line says of its request: the request id, the method and the path (see redactUrl). */
const reqSerializer = (req: { id: string; method: string; url: string }) => ({
  id: req.id,
  method: req.method,
  url: redactUrl(req.url),
});

/** The pino options of every logger of the process: the level, redaction and the request serializer. */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { req: reqSerializer },
  };
}

/** Probes and scrapes: run outside the request-log store, and not logged when answered. */
const notLogged = (url: string): boolean => url.startsWith('/health') || url === '/metrics';

/**
 * The logger of one request: a child of the process's request logger bound to `req` ({id, method, url}). It is
 * made the first time something logs, so a request that logs nothing (at LOG_LEVEL warn, most of them) costs
 * no child logger. nestjs-pino's PinoLogger reads `logger` (and `assign()` replaces it) from the store.
 */
class RequestLog implements Store {
  responseLogger?: Logger = undefined;
  done = false;
  private bound?: Logger;
  private assigned?: Logger;

  constructor(
    private readonly root: Logger,
    private readonly raw: IncomingMessage,
    private readonly id: string,
    readonly reply: FastifyReply,
  ) {}

  /** The child with the request's binding, as the request-completed line uses it. */
  get base(): Logger {
    return (this.bound ??= this.root.child({
      req: { id: this.id, method: this.raw.method ?? '', url: this.raw.url ?? '' },
    }));
  }

  get logger(): Logger {
    return this.assigned ?? this.base;
  }

  set logger(logger: Logger) {
    this.assigned = logger;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    requestLog: RequestLog | null;
  }
}

/**
 * Request logs as Fastify hooks: each request runs in nestjs-pino's store with its own (lazily made) logger, so
 * what the service logs while answering carries the request, and an answered request is logged at info as
 * `request completed` (`request errored` with an `err` for a 5xx) with its `res` (status code and headers) and
 * `responseTime` in ms, as pino-http logs them. Register right after the hook that settles the request id.
 */
export function registerRequestLogging(
  fastify: FastifyInstance,
  level: string,
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = {
    ...loggerOptions(level),
    serializers: { req: reqSerializer, res: stdSerializers.res, err: stdSerializers.err },
  };
  // stdout as pino's default, unless told otherwise (specs)
  const root = destination ? pino(options, destination) : pino(options);
  fastify.decorateRequest('requestLog', null);
  fastify.addHook('onRequest', (request, reply, done) => {
    // Probes and scrapes run outside the store (and so are never logged): entering it turns on Node's promise
    // hooks for the rest of the process (AsyncLocalStorage), a cost on every promise of a worker process that
    // answers nothing else.
    if (notLogged(redactUrl(request.raw.url))) return done();
    const log = new RequestLog(root, request.raw, String(request.headers['x-request-id']), reply);
    request.requestLog = log;
    storage.run(log, done);
  });
  const completed = (request: FastifyRequest, done: () => void) => {
    const log = request.requestLog;
    if (log && !log.done) {
      log.done = true;
      if (root.isLevelEnabled('info')) answered(log.base, log.reply);
    }
    done();
  };
  fastify.addHook('onResponse', (request, _reply, done) => completed(request, done));
  // a caller that goes away before its answer is logged too (pino-http logs on 'close')
  fastify.addHook('onRequestAbort', completed);
  return root;
}

function answered(log: Logger, reply: FastifyReply): void {
  const res = reply.raw;
  const responseTime = Math.round(reply.elapsedTime);
  if (res.statusCode >= 500) {
    const err = new Error(`failed with status code ${res.statusCode}`);
    log.info({ res, err, responseTime }, 'request errored');
  } else {
    log.info({ res, responseTime }, 'request completed');
  }
}
