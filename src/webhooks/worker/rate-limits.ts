import { Injectable } from '@nestjs/common';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppConfig } from '../../config';
import { RedisConnection } from '../../queue/queue.module';

/**
 * Per-webhook delivery rate limits, shared by every worker process through Redis (a fixed one-second window
 * per webhook, counted atomically by rate-limiter-flexible). Keys live under the queue prefix, so services
 * sharing a Redis keep apart.
 */
@Injectable()
export class RateLimits {
  /** One limiter per limit value (the library fixes the points per limiter; the key names the webhook). */
  private readonly limiters = new Map<number, RateLimiterRedis>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly config: AppConfig,
  ) {}

  /**
   * Takes one of this second's `perSecond` sends of the webhook. 0 when it may send now; otherwise how long
   * to wait. Those over the limit are spread over the coming windows by how far over they are, so that they
   * come back about when their turn is due rather than all at once.
   */
  async admit(webhookId: string, perSecond: number, random: () => number = Math.random): Promise<number> {
    try {
      await this.limiter(perSecond).consume(webhookId, 1);
      return 0;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const over = Math.max(1, err.consumedPoints - perSecond);
      const windows = Math.floor((over - 1) / perSecond);
      const place = ((over - 1) % perSecond) * (1000 / perSecond);
      return (
        Math.max(1, err.msBeforeNext) + windows * 1000 + Math.round(place + random() * Math.min(50, 1000 / perSecond))
      );
    }
  }

  private limiter(points: number): RateLimiterRedis {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis.client,
        points,
        duration: 1,
        keyPrefix: `${this.config.redis.prefix}:webhook-rate`,
      });
      this.limiters.set(points, limiter);
    }
    return limiter;
  }
}
