import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { RedisHealthIndicator } from './redis.health';

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly redis: RedisHealthIndicator,
  ) {}

  /** Liveness: the process answers. */
  @Get()
  @ApiOperation({ operationId: 'getHealth', summary: 'Liveness: the process answers' })
  @ApiOkResponse({ description: 'The process is alive', schema: { example: { status: 'ok' } } })
  live() {
    return { status: 'ok' };
  }

  /** Readiness: Postgres and Redis are reachable; 503 otherwise. */
  @Get('ready')
  @ApiOperation({ operationId: 'getReadiness', summary: 'Readiness: Postgres and Redis reachable (503 otherwise)' })
  @HealthCheck()
  @ApiOkResponse({ description: 'Postgres and Redis reachable' })
  @ApiServiceUnavailableResponse({ description: 'Postgres or Redis unreachable' })
  ready() {
    return this.health.check([() => this.db.pingCheck('postgres', { timeout: 1000 }), () => this.redis.ping()]);
  }
}
