import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram } from 'prom-client';
import { MetricsRegistry } from './metrics.registry';

// Requests that match no route are counted under one label, so probes of random paths cannot
// create a time series each.
const UNMATCHED = 'unmatched';

/**
 * HTTP metrics of every request the process answers: a counter and a latency histogram by method,
 * route template (`/portal-api/webhooks/:id`, never the concrete path) and status code.
 */
@Injectable()
export class HttpMetrics implements OnModuleInit {
  constructor(
    private readonly registry: MetricsRegistry,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const labelNames = ['method', 'route', 'status_code'] as const;
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered',
      labelNames,
      registers: [this.registry],
    });
    const duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving an HTTP request to sending the last byte of its answer',
      labelNames,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onResponse', (request, reply, done) => {
      const labels = {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED,
        status_code: String(reply.statusCode),
      };
      requests.inc(labels);
      duration.observe(labels, reply.elapsedTime / 1000);
      done();
    });
  }
}
