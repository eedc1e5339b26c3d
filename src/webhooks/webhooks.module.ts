import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventsModule } from '../events/events.module';
import { MetricsModule } from '../metrics/metrics.module';
import { QueueModule } from '../queue/queue.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { DELIVERY_QUEUE, DeliveryQueue } from './delivery.queue';
import { DeliveryStore } from './delivery.store';
import { DeliverySigner } from './send/delivery-signer';
import { HttpSender } from './send/http-sender';
import { DestinationRegistry, DESTINATIONS } from './send/destination-registry';
import { WebhookHeaderEntity } from './webhook-header.entity';
import { DeliveryMetrics, DispatchGauges } from './webhook-metrics';
import { WebhookEntity } from './webhook.entity';
import { WebhooksController } from './webhooks.controller';
import { WebhookStatsService } from './webhook-stats.service';
import { WebhooksService } from './webhooks.service';
import { DeliveryProcessor } from './worker/delivery.processor';
import { OutboxRelay } from './worker/outbox-relay';
import { RateLimits } from './worker/rate-limits';
import { Reconciler } from './worker/reconciler';
import { SigningKeyEraser } from './worker/signing-key-eraser';
import { WebhookHealth } from './worker/webhook-health';
import { DeliveryRetention } from './worker/delivery-retention';

/**
 * The webhook dispatcher. API side: subscriptions, their headers and the delivery log (portal routes).
 * Worker side: the outbox relay (events → deliveries → one job each), the delivery processor (sign, send,
 * record, retry), the reconciler and the delivery log's retention. Both sides share the store, the only writer of
 * deliveries and attempts,
 * and the delivery queue.
 */
@Module({})
export class WebhooksModule {
  static register(roles: { api: boolean; worker: boolean }): DynamicModule {
    const controllers: Type[] = roles.api ? [WebhooksController, DeliveriesController] : [];
    // destinations check and mask configurations on the API side, and send on the worker side
    const providers: Provider[] = [
      DeliveryStore,
      DeliveryQueue,
      DispatchGauges,
      HttpSender,
      ...DESTINATIONS,
      DestinationRegistry,
    ];
    if (roles.api) providers.push(WebhooksService, DeliveriesService, WebhookStatsService);
    if (roles.worker)
      providers.push(
        OutboxRelay,
        DeliveryProcessor,
        Reconciler,
        DeliveryRetention,
        DeliveryMetrics,
        DeliverySigner,
        SigningKeyEraser,
        RateLimits,
        WebhookHealth,
      );
    return {
      module: WebhooksModule,
      imports: [
        TypeOrmModule.forFeature([WebhookEntity, WebhookHeaderEntity]),
        EventsModule,
        QueueModule,
        BullModule.registerQueue({ name: DELIVERY_QUEUE }),
        MetricsModule,
      ],
      controllers,
      providers,
    };
  }
}
