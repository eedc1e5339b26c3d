import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DeadlineExceeded, withDeadline } from '../common/deadline';
import { RedisConnection } from '../queue/queue.module';

@Injectable()
export class RedisHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly redis: RedisConnection,
  ) {}

  async ping(key = 'redis', timeoutMs = 1000) {
    const session = this.indicators.check(key);
    try {
      const answer = await withDeadline(this.redis.client.ping(), timeoutMs);
      return answer === 'PONG' ? session.up() : session.down({ message: `unexpected answer ${answer}` });
    } catch (err) {
      const message = err instanceof DeadlineExceeded ? 'timeout' : err instanceof Error ? err.message : 'unreachable';
      return session.down({ message });
    }
  }
}
