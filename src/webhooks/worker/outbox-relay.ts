import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { answerWithinMs, CONNECT_TIMEOUT_MS, PreparingClient } from '../../database/data-source';
import { AppConfig } from '../../config';
import { DeliveryMetrics } from '../webhook-metrics';
import { OUTBOX_CHANNEL, OutboxNotification, parseOutboxNotification } from '../../events/outbox.store';
import { DELIVERY_QUEUE, DeliveryQueue } from '../delivery.queue';
import { DeliveryStore, RelayClaim, RelayedDelivery } from '../delivery.store';
import { contextFromCarrier, dispatcherTracer, traceCarrier, tracingOn } from '../trace-context';
import { PeriodicRunner } from '../../common/periodic/periodic.runner';
import { jitter } from '../send/retry-policy';

/** Events one relay statement claims at most. */
const BATCH = 500;
/** The safety-net scan: events whose NOTIFY was missed (no listener at the time, a lost connection). */
const POLL_MS = 2000;

/**
 * Turns committed outbox events into deliveries and queues one job per delivery.
 *
 * The NOTIFY sent by the transaction that wrote the events carries their ids and times: the relay claims
 * exactly those (by primary key, in their days' partitions), so its cost does not grow with the outbox. A
 * scan of the oldest unrelayed events runs at start-up and every 2 s (PeriodicRunner) as a safety net.
 * Claiming an event and creating its deliveries is one statement (DeliveryStore.relay); an event nobody
 * subscribes to is marked relayed and queues nothing. Should the queue refuse the jobs, the deliveries are
 * still pending in Postgres and the reconciler queues them (DeliveryQueue.enqueueCommitted). Claims use
 * SKIP LOCKED, so any number of worker processes can run it.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private listener?: PreparingClient;
  private running = false;
  private stopped = false;
  private idle?: Promise<void>;
  /** Events announced by NOTIFY and not yet claimed, with the range of their times when the NOTIFY said. */
  private readonly announced = new Map<string, { from: Date; to: Date } | null>();
  private scanWanted = false;

  constructor(
    private readonly config: AppConfig,
    private readonly store: DeliveryStore,
    private readonly queue: DeliveryQueue,
    private readonly runner: PeriodicRunner,
    private readonly metrics: DeliveryMetrics,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
    this.runner.schedule({ name: 'outbox safety scan', intervalMs: POLL_MS, run: async () => this.scan() });
    this.scan();
  }

  /** Before the database goes away: stop claiming, let the running pass finish, close the LISTEN connection. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    await this.idle;
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  /** Asks for a scan of the oldest unrelayed events. */
  scan(): void {
    this.scanWanted = true;
    this.wake();
  }

  private announce(n: OutboxNotification | null): void {
    if (n === null) this.scanWanted = true;
    else for (const id of n.ids) this.announced.set(id, n.from && n.to ? { from: n.from, to: n.to } : null);
    this.wake();
  }

  private wake(): void {
    if (this.stopped || this.running) return;
    this.running = true;
    this.idle = this.drain()
      .catch((err) => this.logger.warn({ err }, 'outbox relay failed; the next poll retries'))
      .finally(() => {
        this.running = false;
        if (!this.stopped && (this.announced.size > 0 || this.scanWanted)) this.wake();
      });
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      if (this.announced.size > 0) {
        const batch = [...this.announced].slice(0, BATCH);
        for (const [id] of batch) this.announced.delete(id);
        await this.relay(claimOf(batch));
      } else if (this.scanWanted) {
        this.scanWanted = false;
        // keep scanning while batches come back full
        if ((await this.relay(null)) === BATCH) this.scanWanted = true;
      } else {
        return;
      }
    }
  }

  /** One relay statement, then its deliveries' jobs; returns how many events it claimed. */
  async relay(claim: RelayClaim): Promise<number> {
    const startTime = Date.now();
    // the schedule's first entry is the first attempt's delay (0 by default: at once)
    const firstDelayMs = jitter(this.config.webhooks.retrySchedule[0] * 1000);
    const { events, refused, deliveries } = await this.store.relay(claim, BATCH, undefined, firstDelayMs);
    this.metrics.filterRefused(refused);
    const spans = startRelaySpans(deliveries, startTime);
    if (!(await this.queue.enqueueCommitted(deliveries, 'new deliveries'))) {
      for (const span of spans) span.setStatus({ code: SpanStatusCode.ERROR, message: 'deliveries not queued' });
    }
    for (const span of spans) span.end();
    return events;
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    // bounded as the pools' connections are: its LISTEN, and its close at a stop (a frozen server never ends it)
    const client = new PreparingClient({
      connectionString: this.config.database.url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      answerWithinMs: answerWithinMs(this.config.database.statementTimeoutMs),
    });
    client.on('notification', (n) => this.announce(parseOutboxNotification(n.payload)));
    client.on('error', (err) => {
      if (this.stopped) return;
      this.logger.warn({ err }, 'outbox listener lost its connection; reconnecting');
      this.listener = undefined;
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen().catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (this.stopped) {
        await client.end().catch(() => undefined);
        return;
      }
      this.listener = client;
      // whatever committed while nobody listened
      this.scan();
    } catch (err) {
      this.logger.warn({ err }, 'could not LISTEN for outbox events; polling only until it can');
      await client.end().catch(() => undefined);
      setTimeout(() => void this.listen().catch(() => undefined), 2000).unref();
    }
  }
}

/**
 * The claim of announced events: their ids, within the range of their times (all-time when a NOTIFY did not
 * say, as one from an older version would not).
 */
function claimOf(batch: [string, { from: Date; to: Date } | null][]): RelayClaim {
  let from: Date | null = null;
  let to: Date | null = null;
  for (const [, range] of batch) {
    if (range === null) return { ids: batch.map(([id]) => id), from: null, to: null };
    if (from === null || range.from < from) from = range.from;
    if (to === null || range.to > to) to = range.to;
  }
  return { ids: batch.map(([id]) => id), from, to };
}

/**
 * One span per relayed event that has deliveries, continuing the trace stored with the event (that of the
 * request that recorded it) and covering the relay statement and the queueing of its deliveries. Each
 * delivery's job then carries this span's context on to the attempts. Without tracing the spans would be
 * no-ops and the jobs would carry nothing: none is built.
 */
function startRelaySpans(deliveries: RelayedDelivery[], startTime: number): Span[] {
  if (!tracingOn()) return [];
  const spans = new Map<string, { span: Span; count: number }>();
  const tracer = dispatcherTracer();
  for (const d of deliveries) {
    let relayed = spans.get(d.eventId);
    if (!relayed) {
      const span = tracer.startSpan(
        `relay ${d.eventName}`,
        {
          kind: SpanKind.PRODUCER,
          startTime,
          attributes: {
            'webhook.event.id': d.eventId,
            'webhook.event.name': d.eventName,
            'messaging.system': 'bullmq',
            'messaging.operation.type': 'send',
            'messaging.destination.name': DELIVERY_QUEUE,
          },
        },
        contextFromCarrier(d.eventTrace),
      );
      relayed = { span, count: 0 };
      spans.set(d.eventId, relayed);
    }
    relayed.count++;
    d.trace = traceCarrier(trace.setSpan(ROOT_CONTEXT, relayed.span));
  }
  return [...spans.values()].map(({ span, count }) => span.setAttribute('messaging.batch.message_count', count));
}
