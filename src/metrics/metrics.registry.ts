import { collectDefaultMetrics, Registry } from 'prom-client';

/** The process's Prometheus registry (default process metrics included). */
export class MetricsRegistry extends Registry {
  constructor() {
    super();
    collectDefaultMetrics({ register: this });
  }
}
