import { Global, Module } from '@nestjs/common';
import { HttpMetrics } from './http-metrics';
import { MetricsController } from './metrics.controller';
import { MetricsRegistry } from './metrics.registry';
import { QueueGauges } from './queue-gauges';

/** GET /metrics in every role; features register their own counters in MetricsRegistry. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsRegistry, QueueGauges, HttpMetrics],
  exports: [MetricsRegistry],
})
export class MetricsModule {}
