import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config';
import { DeliveryJobs } from '../delivery/delivery-jobs';
import { QueueName } from './queues';
import { redisOptionsFromUrl } from './redis-connection';

/** BullMQ on Redis with the configured key prefix; registers every queue so any role can enqueue. */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        connection: redisOptionsFromUrl(config.redis.url!),
        prefix: config.redis.prefix,
      }),
    }),
    BullModule.registerQueue({ name: QueueName.Events }, { name: QueueName.Deliveries }),
  ],
  providers: [DeliveryJobs],
  exports: [BullModule, DeliveryJobs],
})
export class QueueModule {}
