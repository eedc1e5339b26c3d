import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module, Provider, Type } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MetricsModule } from '../metrics/metrics.module';
import { QueueModule } from '../queue/queue.module';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { DELIVERY_QUEUE, DeliveryQueue } from './delivery.queue';
import { DeliveryLogStore } from './delivery-log.store';
import { DeliveryStore } from './delivery.store';
import { WebhookStore } from './webhook.store';
import { PeriodicRunner } from '../common/periodic/periodic.runner';
import { DeliverySigner } from './send/delivery-signer';
import { HttpSender } from './send/http-sender';
import { DESTINATION_PROVIDERS, DestinationRegistry } from './send/destination-registry';
import { DeliveryMetrics, DispatchGauges } from './webhook-metrics';
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
import { PrefixNeighbours } from './worker/prefix-neighbours';
import { WebhookPurge } from './worker/webhook-purge';

/**
 * The webhook dispatcher. API side: subscriptions, their headers and the delivery log (portal routes).
 * Worker side: the outbox relay (events → deliveries → one job each), the delivery processor (sign, send,
 * record, retry), and the periodic work (reconciler, retention, the purge of deleted webhooks, signing-key eraser)
 * on one runner. Both sides share the stores (WebhookStore: webhooks and headers; DeliveryStore: deliveries and
 * attempts; the outbox's OutboxStore), each the only writer of its tables but for whole days and deleted webhooks'
 * history, which DeliveryLogStore removes; and the delivery queue. Every statement is raw SQL on the one pool (Sql);
 * nothing here goes through TypeORM.
 */
@Module({})
export class WebhooksModule {
  static register(roles: { api: boolean; worker: boolean }): DynamicModule {
    const controllers: Type[] = roles.api ? [WebhooksController, DeliveriesController] : [];
    // destinations check and mask configurations on the API side, and send on the worker side
    const providers: Provider[] = [
      DeliveryStore,
      WebhookStore,
      DeliveryQueue,
      DeliveryMetrics,
      DispatchGauges,
      HttpSender,
      ...DESTINATION_PROVIDERS,
      DestinationRegistry,
    ];
    if (roles.api) providers.push(WebhooksService, DeliveriesService, WebhookStatsService);
    if (roles.worker)
      providers.push(
        PeriodicRunner,
        DeliveryLogStore,
        OutboxRelay,
        DeliveryProcessor,
        Reconciler,
        DeliveryRetention,
        WebhookPurge,
        DeliverySigner,
        SigningKeyEraser,
        RateLimits,
        WebhookHealth,
        PrefixNeighbours,
      );
    return {
      module: WebhooksModule,
      imports: [EventsModule, QueueModule, BullModule.registerQueue({ name: DELIVERY_QUEUE }), MetricsModule],
      controllers,
      providers,
    };
  }
}
