import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { FamilyAuthenticator } from './common/auth/auth.guard';
import { registerAuthenticateFirst } from './common/auth/authenticate-first';
import { ApiError, FamilyExceptionFilter, sendFamilyError } from './common/errors';
import { documentErrorResponses, ERROR_BODIES } from './common/errors/error-responses.openapi';
import { rewriteUrl } from './common/http/trailing-slash';
import { followQuietConnections } from './common/http/quiet-connections';
import { setTraceRoute } from './common/http/trace-route';
import {
  answerRefusedByRouter,
  noteRequestTarget,
  MAX_PARAM_LENGTH,
  onClientError,
  REQUEST_TIMEOUT_MS,
  onConnect,
  onFrameworkError,
} from './common/errors/framework-errors';
import { DEFAULT_BODY_LIMIT, hasBody, registerInputPolicy, utf8JsonParser } from './common/http/input-policy';
import { documentIdempotencyKey } from './common/idempotency/idempotency.openapi';
import { IdempotentRequests } from './common/idempotency/idempotent-requests';
import { createValidationPipe } from './common/http/validation.pipe';
import { documentValidationRules } from './common/http/validation.openapi';
import { admitNullInNullableRefs, listNullInNullableEnums } from './common/http/nullable-enums.openapi';
import { registerRequestLogging } from './common/logging/request-logging';
import { AppConfig, loadConfig } from './config';

const REQUEST_ID = /^[\w.-]{1,128}$/;

/**
 * What is wrong with a request's Host, if anything (RFC 9112 §3.2: a 400 for both). HTTP/1.1 requires a Host header
 * (HTTP/1.0 has none); and no request may carry more than one Host line: Node keeps the first and drops the others,
 * while a proxy in front may have routed or checked by another one.
 */
function hostProblem(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') hosts++;
  if (hosts > 1) return 'a request must carry one Host header, not several';
  if (hosts === 0 && request.raw.httpVersion === '1.1') return 'an HTTP/1.1 request must carry a Host header';
  return undefined;
}

// Node checks REQUEST_TIMEOUT_MS (and its headers' own 60 s) this often, so a 408 comes up to that late
const CONNECTIONS_CHECK_MS = 5_000;

/** Routes that legitimately take bigger bodies than DEFAULT_BODY_LIMIT (e.g. analytics batches). */
export const ROUTE_BODY_LIMITS: Record<string, number> = {
  '/gateway/analytics': 32 * 1024 * 1024,
};

/**
 * Builds the application exactly as `npm start` runs it; tests use the same function. With
 * `closeOnSignals` false the caller closes the app itself on SIGTERM/SIGINT (main does, to stop an
 * embedded PostgreSQL only after everything that uses it has closed).
 */
export async function createApp(
  config: AppConfig,
  extraModules: Type[] = [],
  opts: { closeOnSignals?: boolean } = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    bodyLimit: DEFAULT_BODY_LIMIT,
    logger: false,
    trustProxy: true,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // `/api/apis/` is `/api/apis`, as the product's own examples write it (`GET /api/apis/?p=1`)
    rewriteUrl,
    // what the router and the HTTP parser refuse gets the family's error body too
    frameworkErrors: onFrameworkError,
    clientErrorHandler: onClientError,
    requestTimeout: REQUEST_TIMEOUT_MS,
    // Node's own refusal of an HTTP/1.1 request without Host has an empty body: the hook below refuses it instead
    http: { requireHostHeader: false, connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    // While the server stops, a request still arriving on an open connection is answered by its route (with
    // Connection: close) rather than Fastify's 503 in no family's body: the pools close only after the server.
    return503OnClosing: false,
  });
  const fastify = adapter.getInstance();
  // An expectation other than 100-continue is ignored, as HTTP allows: the request is answered by its route
  // (Node's own 417 for it had an empty body, in no family's form)
  fastify.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    fastify.server.emit('request', req, res),
  );
  fastify.server.on('connect', onConnect);
  // a stop closes the connections once they carry no request, as Node does not (see there); the server stops
  // accepting meanwhile
  const closeQuietConnections = followQuietConnections(fastify.server);
  fastify.addHook('preClose', (done) => {
    void closeQuietConnections();
    done();
  });
  // Every request gets an id (the caller's X-Request-Id if sane), echoed on the response and used by the logs.
  // (hooks on every request take a callback rather than return a promise: one promise less per request)
  fastify.addHook('onRequest', (request, reply, done) => {
    const given = request.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    request.headers['x-request-id'] = id;
    void reply.header('x-request-id', id);
    setTraceRoute(request.routeOptions.url);
    const badHost = hostProblem(request);
    if (badHost) {
      sendFamilyError(request, reply, new ApiError(400, badHost));
      return;
    }
    // No body sent with Content-Type: application/json (e.g. PUT .../approve: Content-Length 0, or neither it nor
    // Transfer-Encoding, as curl -X without -d sends it) means "no body", not bad JSON.
    if (!hasBody(request.headers)) delete request.headers['content-type'];
    done();
  });
  // the request's logger for what is logged while it runs, and its log line once answered
  registerRequestLogging(fastify, config.logLevel);
  fastify.addHook('onRequest', answerRefusedByRouter);
  fastify.addHook('onRequest', noteRequestTarget);
  fastify.addHook('onRoute', (route) => {
    const limit = ROUTE_BODY_LIMITS[route.url];
    if (limit) route.bodyLimit = limit;
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(config, extraModules), adapter, {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  // after the request id hook above: refuse anonymous callers first, then input nobody can store
  if (config.runsApi) registerAuthenticateFirst(fastify, app.get(FamilyAuthenticator));
  // (before the routes are registered, at init: it wraps the handlers of the routes that take a key)
  if (config.runsApi) app.get(IdempotentRequests).register(fastify);
  registerInputPolicy(fastify);
  app.useBodyParser('application/json', { bodyLimit: DEFAULT_BODY_LIMIT }, utf8JsonParser(fastify));
  // JSON sent as text/plain, which the input policy lets through to the gateway family's routes alone
  fastify.removeContentTypeParser('text/plain');
  app.useBodyParser('text/plain', { bodyLimit: DEFAULT_BODY_LIMIT }, utf8JsonParser(fastify));
  app.useGlobalPipes(createValidationPipe());
  app.useGlobalFilters(new FamilyExceptionFilter());
  if (config.runsApi) setupOpenApi(app);
  if (opts.closeOnSignals !== false) app.enableShutdownHooks();
  return app;
}

function setupOpenApi(app: NestFastifyApplication): void {
  // built on the first request for it, and kept: scanning every route takes about 0.2 s of CPU, which a process that
  // is never asked for its document (most of them) would spend at every start (the specs build it: bootstrap.spec,
  // openapi.e2e-spec)
  const document = () => createOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
}

/** The OpenAPI document served at /docs-json, built from the controllers' and DTOs' decorators. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const doc = new DocumentBuilder()
    .setTitle('Gateway management, dashboard and developer portal')
    .setDescription(
      'Four route families, each with its own credential and error body: gateway (/gateway, X-Gateway-Authorization), ' +
        'dashboard (/api, `Authorization: Bearer <access key>`), admin (/admin, Admin-Auth) and portal (/portal-api, `Authorization: <token>`).',
    )
    .setVersion('1.0')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Gateway-Authorization' }, 'gateway')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Admin-Auth' }, 'admin')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization' }, 'portal')
    // (Nest would call it a JWT: it is a user's opaque access key, as POST /admin/users hands it out)
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: '32 lower-case hex characters',
        description: 'a dashboard user access key',
      },
      'dashboard',
    )
    .build();
  // the limits the DTOs' validators enforce, into their schemas before these are built
  documentValidationRules();
  const document = SwaggerModule.createDocument(app, doc, { extraModels: ERROR_BODIES });
  documentIdempotencyKey(document);
  // after the Idempotency-Key's 409 and 422, which get the family's error body too
  documentErrorResponses(document, bodyLimit);
  listNullInNullableEnums(document);
  admitNullInNullableRefs(document);
  return document;
}

/** The largest body a route (as the document names it: `/gateway/analytics`) takes. */
function bodyLimit(path: string): number {
  return ROUTE_BODY_LIMITS[path.replace(/\{(\w+)\}/g, ':$1')] ?? DEFAULT_BODY_LIMIT;
}

/**
 * The same document without PostgreSQL or Redis, for generators: Nest's preview mode scans the modules and their
 * controllers but constructs no provider, so nothing connects. The placeholder secrets are never used.
 */
export async function previewOpenApiDocument(): Promise<OpenAPIObject> {
  const placeholder = (family: string) => `preview-only-${family}-`.padEnd(32, '0');
  const config = loadConfig({
    NODE_ENV: 'test',
    ROLE: 'api',
    GATEWAY_SECRET: placeholder('gateway'),
    ADMIN_SECRET: placeholder('admin'),
    PORTAL_API_TOKEN: placeholder('portal'),
    ENCRYPTION_KEY: '0'.repeat(64),
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.register(config), new FastifyAdapter(), {
    preview: true,
    abortOnError: false,
    logger: false,
  });
  try {
    return createOpenApiDocument(app);
  } finally {
    await app.close();
  }
}
