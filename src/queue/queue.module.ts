import { BullModule } from '@nestjs/bullmq';
import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import IORedis, { Cluster } from 'ioredis';
import { AppConfig } from '../config';
import { createRedisClient, redisOptionsFromUrl } from './redis-connection';

/**
 * The configured Redis, one server or a cluster. `client` is a plain connection for checks such as
 * readiness and for the keys features keep themselves (always under `config.redis.prefix`, a hash tag, so
 * a multi-key command stays within one cluster slot).
 */
@Injectable()
export class RedisConnection implements OnApplicationShutdown {
  readonly client: IORedis | Cluster;
  /**
   * Whether Redis left a close of this process's stop unanswered (closeWithin): the closes after it drop their
   * connections at once instead of waiting as long again, for a Redis frozen for one close is frozen for the next.
   */
  closeUnanswered = false;
  /** BullMQ's connection on a cluster: one shared ioredis Cluster (BullMQ only builds single-server clients itself). */
  private bullCluster?: Cluster;

  constructor(private readonly config: AppConfig) {
    this.client = createRedisClient(config.redis, { lazyConnect: true });
    // reconnects on its own; a caller sees the failure of its own command
    this.client.on('error', () => undefined);
  }

  /** What BullMQ connects with: options for a single server (BullMQ owns those connections), or the shared Cluster. */
  bullConnection(): ReturnType<typeof redisOptionsFromUrl> | Cluster {
    if (!this.config.redis.cluster) return redisOptionsFromUrl(this.config.redis.url!);
    if (!this.bullCluster) {
      this.bullCluster = createRedisClient(this.config.redis) as Cluster;
      this.bullCluster.on('error', () => undefined);
    }
    return this.bullCluster;
  }

  onApplicationShutdown(): void {
    this.client.disconnect();
    this.bullCluster?.disconnect();
  }
}

@Module({ providers: [RedisConnection], exports: [RedisConnection] })
export class RedisModule {}

/**
 * The Redis connection: BullMQ's shared connection and key prefix (a feature declares its own queues with
 * BullModule.registerQueue), and a plain client.
 */
@Module({
  imports: [
    RedisModule,
    BullModule.forRootAsync({
      imports: [RedisModule],
      inject: [AppConfig, RedisConnection],
      useFactory: (config: AppConfig, redis: RedisConnection) => ({
        connection: redis.bullConnection(),
        prefix: config.redis.prefix,
      }),
    }),
  ],
  exports: [RedisModule],
})
export class QueueModule {}
