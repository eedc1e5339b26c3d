import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { Queue } from 'bullmq';
import { QueueName } from '../queue/queues';

@Injectable()
export class RedisHealthIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    @InjectQueue(QueueName.Deliveries) private readonly queue: Queue,
  ) {}

  async ping(key = 'redis', timeoutMs = 1000) {
    const session = this.indicators.check(key);
    try {
      const client = (await this.queue.client) as unknown as { ping(): Promise<string> };
      const answer = await Promise.race([
        client.ping(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref()),
      ]);
      return answer === 'PONG' ? session.up() : session.down({ message: `unexpected answer ${answer}` });
    } catch (err) {
      return session.down({ message: err instanceof Error ? err.message : 'unreachable' });
    }
  }
}
