import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule as PinoLoggerModule } from 'nestjs-pino';
import { AppConfig } from '../../config';

/** Structured JSON logs (pino) with a request id; credentials and secrets are redacted. */
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

/**
 * The URL as logged: its path only, the query string replaced by a marker. Callers do put credentials in
 * query strings (`?access_key=...`, even a bare `?<token>`), refused or not, and the log must not keep them.
 */
export function redactUrl(url: string | undefined): string {
  if (!url) return '';
  const q = url.indexOf('?');
  return q < 0 ? url : `${url.slice(0, q)}?[redacted]`;
}

@Module({})
export class LoggingModule {
  static forRoot(): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        PinoLoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            // Probes and scrapes (never logged, see autoLogging) skip the request logger altogether: its
            // per-request context (an AsyncLocalStorage) would otherwise switch on Node's promise hooks for the
            // rest of the process, a cost on every promise of a worker process that serves nothing else.
            exclude: [
              { path: 'health', method: RequestMethod.GET },
              { path: 'health/ready', method: RequestMethod.GET },
              { path: 'metrics', method: RequestMethod.GET },
            ],
            pinoHttp: {
              level: config.logLevel,
              redact: { paths: REDACT_PATHS, censor: '[redacted]' },
              // bootstrap's onRequest hook has already put a sane id there
              genReqId: (req: IncomingMessage) => String(req.headers['x-request-id'] ?? randomUUID()),
              autoLogging: {
                ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health') || req.url === '/metrics',
              },
              serializers: {
                req: (req: { id: string; method: string; url: string }) => ({
                  id: req.id,
                  method: req.method,
                  url: redactUrl(req.url),
                }),
              },
            },
          }),
        }),
      ],
    };
  }
}
