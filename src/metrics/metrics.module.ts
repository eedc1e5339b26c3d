import { Module } from '@nestjs/common';
import { HttpMetrics } from './http-metrics';
import { MetricsController } from './metrics.controller';
import { MetricsRegistry } from './metrics.registry';

/** GET /metrics in every role; a feature imports this module and registers its own metrics in MetricsRegistry. */
@Module({
  controllers: [MetricsController],
  providers: [MetricsRegistry, HttpMetrics],
  exports: [MetricsRegistry],
})
export class MetricsModule {}
