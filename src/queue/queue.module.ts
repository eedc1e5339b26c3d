import { BullModule } from '@nestjs/bullmq';
import { Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import IORedis from 'ioredis';
import { AppConfig } from '../config';
import { redisOptionsFromUrl } from './redis-connection';

/** A plain connection to the configured Redis, for checks such as readiness. */
@Injectable()
export class RedisConnection implements OnApplicationShutdown {
  readonly client: IORedis;

  constructor(config: AppConfig) {
    this.client = new IORedis({ ...redisOptionsFromUrl(config.redis.url!), lazyConnect: true });
    // reconnects on its own; a caller sees the failure of its own command
    this.client.on('error', () => undefined);
  }

  onApplicationShutdown(): void {
    this.client.disconnect();
  }
}

/**
 * The Redis connection: BullMQ's shared connection options and key prefix (a feature declares its own
 * queues with BullModule.registerQueue), and a plain client.
 */
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        connection: redisOptionsFromUrl(config.redis.url!),
        prefix: config.redis.prefix,
      }),
    }),
  ],
  providers: [RedisConnection],
  exports: [RedisConnection],
})
export class QueueModule {}
