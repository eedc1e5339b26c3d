import { connect as amqpConnect } from 'amqplib';
import { emitEvent } from '../helpers/events';
import { BrokerProxy, JetStreamSubject, RabbitTopic, rabbitName, takeLeftoverRabbitObjects } from '../helpers/brokers';
import { createWebhook, portalClient } from '../helpers/portal';

import { startTestApp } from '../helpers/test-app';
import { useTestEnv } from '../helpers/use-service';
import { eventually } from '../helpers/eventually';

/** A place on a broker, reached through a proxy the spec watches, and what a subscriber there has received. */
interface Place {
  url: string;
  options: Record<string, string>;
  count(): Promise<number>;
  close(): Promise<void>;
}

const BROKERS: { type: 'rabbitmq' | 'nats'; port: number; place(proxyPort: number): Promise<Place> }[] = [
  {
    type: 'rabbitmq',
    port: 5672,
    place: async (proxyPort) => {
      const topic = await RabbitTopic.create();
      return {
        url: `amqp://guest:guest@127.0.0.1:${proxyPort}/`,
        options: { Exchange: topic.exchange, RoutingKey: 'portal.access.approved' },
        count: async () => topic.messages.length,
        close: () => topic.close(),
      };
    },
  },
  {
    type: 'nats',
    port: 4222,
    place: async (proxyPort) => {
      const s = await JetStreamSubject.create();
      return {
        url: `nats://127.0.0.1:${proxyPort}`,
        options: { Subject: `${s.subject}.approved` },
        count: () => s.count(),
        close: () => s.close(),
      };
    },
  },
];

// The connections the service opens to a broker, seen from the outside: a proxy in front of the broker counts
// them. One connection per broker URL, shared by every webhook and delivery; closed on shutdown, once the
// attempts in flight are done.
describe.each(BROKERS)('connections to $type', (broker) => {
  const env = useTestEnv();
  let proxy: BrokerProxy;
  let place: Place;
  beforeAll(async () => {
    proxy = env.adopt(await BrokerProxy.start(broker.port));
    place = env.adopt(await broker.place(proxy.port));
  });

  it('shares one pooled connection across webhooks and deliveries, and closes it on shutdown after the attempt in flight is recorded', async () => {
    const t = await startTestApp({ env });
    let closed = false;
    try {
      const portal = portalClient(t);
      const body = { Type: broker.type, URL: place.url, Options: place.options };
      const a = await createWebhook(portal, { Name: 'a', ...body });
      await createWebhook(portal, { Name: 'b', ...body });
      for (let i = 0; i < 3; i++) await emitEvent(t, 'AccessRequestApproved', { ID: i });
      await eventually(async () => (await place.count()) >= 6, 20_000, 'six messages');
      expect(proxy.opened).toBe(1);
      expect(proxy.open).toBe(1);

      // the broker takes the next message at once, but its confirmation is held back: the attempt is in flight
      proxy.delayMs = 3000;
      const event = await emitEvent(t, 'AccessRequestApproved', { ID: 99 });
      await eventually(async () => (await place.count()) >= 8, 20_000, 'the last messages on the broker');
      closed = true;
      await t.close();

      // the app closed its connection, and only after the attempt had its confirmation and was recorded
      await eventually(async () => proxy.open === 0, 5_000, 'the connection closed');
      expect(proxy.opened).toBe(1);
      const { rows } = await (
        await env.client()
      ).query(
        `SELECT d.status, array_agg(a.error) AS errors FROM webhook_deliveries d
           JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
          WHERE d.event_id = $1 AND d.webhook_id = $2 GROUP BY d.status`,
        [event, a.ID],
      );
      expect(rows).toEqual([{ status: 'delivered', errors: [null] }]);
    } finally {
      if (!closed) await t.close();
    }
  }, 60_000);
});

describe('the RabbitMQ hygiene check of the test teardown', () => {
  it('finds the exchanges and queues a spec left behind, deletes them, and says nothing of those it deleted', async () => {
    const [exchange, queue, deleted] = [rabbitName(), rabbitName(), rabbitName()];
    const model = await amqpConnect('amqp://guest:guest@127.0.0.1:5672/');
    try {
      const ch = await model.createChannel();
      await ch.assertExchange(exchange, 'topic', { durable: false });
      await ch.assertQueue(queue, { durable: false });
      await ch.assertExchange(deleted, 'topic', { durable: false });
      await ch.deleteExchange(deleted);
    } finally {
      await model.close();
    }
    expect(await takeLeftoverRabbitObjects([exchange, queue, deleted])).toEqual([
      `exchange ${exchange}`,
      `queue ${queue}`,
    ]);
    expect(await takeLeftoverRabbitObjects([exchange, queue, deleted])).toEqual([]);
  });
});
