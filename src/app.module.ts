import { DynamicModule, Module, Type } from '@nestjs/common';
import { AuthModule } from './common/auth/auth.module';
import { CryptoModule } from './common/crypto/crypto.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { LoggingModule } from './common/logging/logging.module';
import { AppConfig, ConfigModule } from './config';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { DashboardAnalyticsModule } from './dashboard/analytics/dashboard-analytics.module';
import { DashboardApisModule } from './dashboard/apis/dashboard-apis.module';
import { UsersModule } from './dashboard/users/users.module';
import { GatewayAnalyticsModule } from './gateway/analytics/gateway-analytics.module';
import { OasApisModule } from './gateway/apis/oas-apis.module';
import { AccessRequestsModule } from './portal/access-requests/access-requests.module';
import { AppsModule } from './portal/apps/apps.module';
import { MetricsModule } from './metrics/metrics.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { ConsoleModule } from './console/console.module';
import { QueueBoardModule } from './queue-board/queue-board.module';

/** Feature modules serving HTTP routes (role api or all), and idempotent retries of their writes. */
const API_MODULES: Type[] = [
  IdempotencyModule,
  AppsModule,
  AccessRequestsModule,
  UsersModule,
  DashboardApisModule,
  DashboardAnalyticsModule,
  OasApisModule,
  GatewayAnalyticsModule,
];

/** Browser pages for operators (role api or all): the console at /console and Bull Board at /queues. */
const PAGE_MODULES: Type[] = [ConsoleModule, QueueBoardModule];

@Module({})
export class AppModule {
  static register(config: AppConfig, extraModules: Type[] = []): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(),
        DatabaseModule,
        CryptoModule,
        AuthModule,
        HealthModule,
        MetricsModule,
        // the API side of webhooks in role api, the dispatcher (relay, delivery worker, reconciler) in role worker
        WebhooksModule.register({ api: config.runsApi, worker: config.runsWorker }),
        ...(config.runsApi ? [...API_MODULES, ...PAGE_MODULES] : []),
        ...extraModules,
      ],
    };
  }
}
