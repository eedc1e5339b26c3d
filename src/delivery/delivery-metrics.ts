import { Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from '../metrics/metrics.registry';

/** Counters of this worker process: attempts by outcome and their latency. */
@Injectable()
export class DeliveryMetrics {
  private readonly attempts: Counter<'outcome' | 'error'>;
  private readonly latency: Histogram<'outcome'>;

  constructor(registry: MetricsRegistry) {
    this.attempts = new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Delivery attempts by resulting delivery status (delivered, pending = will retry, failed) and error kind',
      labelNames: ['outcome', 'error'],
      registers: [registry],
    });
    this.latency = new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Duration of delivery attempts',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    });
  }

  attempt(outcome: string, error: string | null, durationMs: number): void {
    this.attempts.inc({ outcome, error: error ?? 'none' });
    this.latency.observe({ outcome }, durationMs / 1000);
  }
}
