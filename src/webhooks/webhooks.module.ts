import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliveriesController } from './deliveries.controller';
import { DeliveriesService } from './deliveries.service';
import { WebhookHeaderEntity } from './webhook-header.entity';
import { WebhookEntity } from './webhook.entity';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhook subscriptions, headers and the delivery log (portal routes). */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookEntity, WebhookHeaderEntity])],
  controllers: [WebhooksController, DeliveriesController],
  providers: [WebhooksService, DeliveriesService],
})
export class WebhooksModule {}
