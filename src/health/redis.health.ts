import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
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
      const answer = await Promise.race([
        this.redis.client.ping(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref()),
      ]);
      return answer === 'PONG' ? session.up() : session.down({ message: `unexpected answer ${answer}` });
    } catch (err) {
      return session.down({ message: err instanceof Error ? err.message : 'unreachable' });
    }
  }
}
