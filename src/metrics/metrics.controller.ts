import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MetricsRegistry } from './metrics.registry';

@ApiTags('metrics')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: MetricsRegistry) {}

  /** Prometheus text exposition of every metric registered in the process (see the README for the webhook ones). */
  @Get()
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics: HTTP requests, webhook deliveries, queues, process',
  })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOkResponse({ description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } })
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
