import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule as PinoLoggerModule } from 'nestjs-pino';
import { AppConfig } from '../../config';
import { loggerOptions } from './request-logging';

export { REDACT_PATHS, redactUrl } from './request-logging';

/**
 * Structured JSON logs (pino) with a request id; credentials and secrets are redacted. nestjs-pino is the Nest
 * logger; the request logs (and the request's logger it logs with) come from Fastify hooks (request-logging.ts,
 * registered by createApp), so nestjs-pino's own middleware is bound to no route.
 */
@Module({})
export class LoggingModule {
  static forRoot(): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        PinoLoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ pinoHttp: loggerOptions(config.logLevel), forRoutes: [] }),
        }),
      ],
    };
  }
}
