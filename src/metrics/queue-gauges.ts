import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { QueueName } from '../queue/queues';
import { MetricsRegistry } from './metrics.registry';

/** Gauges read at scrape time from Redis (queue depth) and Postgres (oldest pending delivery). */
@Injectable()
export class QueueGauges implements OnModuleInit {
  constructor(
    private readonly registry: MetricsRegistry,
    @InjectDataSource() private readonly db: DataSource,
    @InjectQueue(QueueName.Deliveries) private readonly deliveries: Queue,
    @InjectQueue(QueueName.Events) private readonly events: Queue,
  ) {}

  onModuleInit(): void {
    const queues = { [QueueName.Deliveries]: this.deliveries, [QueueName.Events]: this.events };
    new Gauge({
      name: 'webhook_queue_depth',
      help: 'Jobs in the queue by state',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      collect: async function (this: Gauge) {
        for (const [name, queue] of Object.entries(queues)) {
          const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
          for (const [state, n] of Object.entries(counts)) this.set({ queue: name, state }, n);
        }
      },
    });
    const db = this.db;
    new Gauge({
      name: 'webhook_oldest_pending_delivery_age_seconds',
      help: 'Age of the oldest delivery still pending (0 when none)',
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(`SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM webhook_deliveries WHERE status = 'pending'`);
        this.set(Number(row.age));
      },
    });
    new Gauge({
      name: 'outbox_unrelayed_events',
      help: 'Events committed but not yet handed to the queue',
      registers: [this.registry],
      collect: async function (this: Gauge) {
        const [row] = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE relayed_at IS NULL`);
        this.set(row.n);
      },
    });
  }
}
