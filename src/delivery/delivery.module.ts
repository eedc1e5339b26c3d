import { Module } from '@nestjs/common';
import { DeliveryMetrics } from './delivery-metrics';
import { DeliveryStore } from './delivery-store';
import { DeliveryProcessor } from './delivery.processor';
import { FanoutProcessor } from './fanout.processor';
import { HttpSender } from './http-sender';
import { Reconciler } from './reconciler.service';

/** The worker side of webhooks: fan-out, signed delivery with retries, and the reconciler. */
@Module({
  providers: [DeliveryStore, HttpSender, DeliveryMetrics, FanoutProcessor, DeliveryProcessor, Reconciler],
})
export class DeliveryModule {}
