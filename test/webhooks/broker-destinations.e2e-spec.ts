import { Webhook } from 'standardwebhooks';
import { emitEvent } from '../helpers/events';
import { BrokerMessage, closedPort, JetStreamSubject, NATS_URL, RABBITMQ_URL, RabbitTopic } from '../helpers/brokers';
import { createWebhook, CreatedWebhook, RFC3339 } from '../helpers/portal';
import { closeAfterEach } from '../helpers/use-fixture';
import { Service, startService, useService } from '../helpers/use-service';
import { eventually } from '../helpers/eventually';

/** A place on one broker that a webhook publishes to, and what a subscriber there has received. */
interface Target {
  url: string;
  options: Record<string, string>;
  received(): Promise<BrokerMessage[]>;
  waitFor(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

interface Broker {
  type: 'rabbitmq' | 'nats';
  target(): Promise<Target>;
  /** The same broker URL on a port nothing listens on. */
  down(port: number): string;
  /** Options that reach no queue or stream, and the setup they need. */
  unroutable(): Promise<{ options: Record<string, string>; close(): Promise<void> }>;
}

const BROKERS: Broker[] = [
  {
    type: 'rabbitmq',
    target: async () => {
      const topic = await RabbitTopic.create();
      return {
        url: RABBITMQ_URL,
        options: { Exchange: topic.exchange, RoutingKey: 'portal.access.approved' },
        received: async () => topic.messages,
        waitFor: (n, ms) => topic.waitFor(n, ms),
        close: () => topic.close(),
      };
    },
    down: (port) => `amqp://guest:guest@127.0.0.1:${port}/`,
    unroutable: async () => {
      const bare = await RabbitTopic.bareExchange();
      return { options: { Exchange: bare.name, RoutingKey: 'nobody.listens' }, close: bare.close };
    },
  },
  {
    type: 'nats',
    target: async () => {
      const s = await JetStreamSubject.create();
      return {
        url: NATS_URL,
        options: { Subject: `${s.subject}.approved` },
        received: () => s.messages(),
        waitFor: (n, ms) => s.waitFor(n, ms),
        close: () => s.close(),
      };
    },
    down: (port) => `nats://127.0.0.1:${port}`,
    unroutable: async () => ({ options: { Subject: 'gwmtest.nobody.captures.this' }, close: async () => undefined }),
  },
];

function create(t: Service, body: { URL: string } & Record<string, unknown>): Promise<CreatedWebhook> {
  return createWebhook(t.portal, { Name: 'bus', ...body });
}

async function deliveries(t: Service, id: string): Promise<any[]> {
  return (await t.portal.get(`/portal-api/webhooks/${id}/deliveries?per_page=100`)).body;
}

async function delivery(t: Service, id: string, deliveryId: string): Promise<any> {
  return (await t.portal.get(`/portal-api/webhooks/${id}/deliveries/${deliveryId}`)).body;
}

async function metric(t: Service, line: RegExp): Promise<number> {
  const text = (await t.http.get('/metrics')).text;
  const found = text.split('\n').find((l) => line.test(l));
  return found ? Number(found.split(' ').pop()) : 0;
}

describe.each(BROKERS)('deliveries to $type', (broker) => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1,1,1' } });
  const closer = closeAfterEach();

  it('publishes the same body with Standard Webhooks headers a receiver verifies, the delivery id as message id; the credentials never show', async () => {
    const target = closer.adopt(await broker.target());
    const w = await create(t, {
      Type: broker.type,
      URL: target.url,
      Options: target.options,
      Headers: [{ Name: 'X-Team', Value: 'iam' }],
    });
    const got = (await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body;
    expect(got).toMatchObject({ Type: broker.type, Options: target.options });
    if (broker.type === 'rabbitmq') expect(got.URL).toBe('amqp://guest:***@127.0.0.1:5672/');
    else expect(got.URL).toBe(NATS_URL);
    const [row] = await t.db.query(`SELECT url, destination_encrypted FROM webhooks WHERE id = $1`, [w.ID]);
    expect(row.destination_encrypted).not.toContain('guest');
    expect(row.destination_encrypted).not.toContain('127.0.0.1');

    await emitEvent(t, 'AccessRequestApproved', { ID: 11, Status: 'approved' });
    await target.waitFor(1);
    const [m] = await target.received();
    const verified = new Webhook(w.Secret).verify(m.body, m.headers) as Record<string, any>;
    expect(verified).toEqual({
      Event: 'AccessRequestApproved',
      Message: { ID: 11, Status: 'approved' },
      Timestamp: expect.stringMatching(RFC3339),
    });
    expect(m.headers['x-team']).toBe('iam');
    const [d] = await deliveries(t, w.ID);
    expect(m.messageId).toBe(d.ID);
    expect(m.headers['webhook-id']).toBe(d.ID);
    await eventually(async () => (await delivery(t, w.ID, d.ID)).Status === 'delivered', 10_000, 'delivered');
    const detail = await delivery(t, w.ID, d.ID);
    expect(detail.Attempts).toEqual([
      expect.objectContaining({ Number: 1, StatusCode: null, Error: null, Trigger: 'scheduled' }),
    ]);
    expect(detail.Attempts[0].ResponseBody).toMatch(
      broker.type === 'rabbitmq' ? /confirmed by the broker/ : /acknowledged by stream/,
    );

    // a test send goes the same way, and a redelivery is one more (manual) attempt of the same message
    const test = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'bus check' });
    expect(test.status).toBe(202);
    await target.waitFor(2);
    expect(JSON.parse((await target.received())[1].body)).toMatchObject({
      Event: 'WebhookTest',
      Message: { Note: 'bus check' },
    });
    const again = await t.portal.post(`/portal-api/webhooks/${w.ID}/deliveries/${d.ID}/redeliver`, {});
    expect(again.status).toBe(200);
    await eventually(async () => (await delivery(t, w.ID, d.ID)).Attempts.length === 2, 10_000, 'the redelivery');
    const redelivered = await delivery(t, w.ID, d.ID);
    expect(redelivered.Attempts[1]).toMatchObject({ Number: 2, Error: null, Trigger: 'manual' });
    if (broker.type === 'nats') {
      // the same message id within the stream's duplicate window: the stream keeps one copy
      expect(redelivered.Attempts[1].ResponseBody).toMatch(/duplicate/);
      expect((await target.received()).filter((x) => x.messageId === d.ID)).toHaveLength(1);
    } else {
      await target.waitFor(3);
      expect((await target.received()).filter((x) => x.messageId === d.ID)).toHaveLength(2);
    }
    const stats = (await t.portal.get(`/portal-api/webhooks/${w.ID}/stats`)).body;
    expect(stats).toMatchObject({ Delivered: 2, Failed: 0, Pending: 0 });
    expect(
      await metric(t, /^webhook_delivery_attempts_total\{outcome="delivered",error="none"\}/),
    ).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('a broker that is down fails the attempt with a clear error and retries; fixing the URL delivers it', async () => {
    const target = closer.adopt(await broker.target());
    const w = await create(t, { Type: broker.type, URL: broker.down(await closedPort()), Options: target.options });
    await emitEvent(t, 'AccessRequestApproved', { ID: 12 });
    let id = '';
    await eventually(
      async () => {
        const [d] = await deliveries(t, w.ID);
        id = d?.ID ?? '';
        return !!d && d.AttemptCount >= 2;
      },
      20_000,
      'two failed attempts',
    );
    const failed = await delivery(t, w.ID, id);
    expect(failed.Status).toBe('pending');
    expect(failed.Attempts[0]).toMatchObject({ StatusCode: null, Error: 'connection' });
    expect(failed.Attempts[0].ResponseBody).toMatch(/cannot reach the (broker|NATS server).*(ECONNREFUSED|refused)/i);
    expect(
      await metric(t, /^webhook_delivery_attempts_total\{outcome="retry",error="connection"\}/),
    ).toBeGreaterThanOrEqual(2);

    const fixed = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { URL: target.url });
    expect(fixed.status).toBe(200);
    await target.waitFor(1, 30_000);
    await eventually(async () => (await delivery(t, w.ID, id)).Status === 'delivered', 20_000, 'delivered once fixed');
    expect(JSON.parse((await target.received())[0].body).Message).toEqual({ ID: 12 });
  }, 90_000);

  it('a message nothing routes to is a failed attempt (unroutable), never a delivery', async () => {
    const nowhere = closer.adopt(await broker.unroutable());
    const w = await create(t, {
      Type: broker.type,
      URL: broker.type === 'rabbitmq' ? RABBITMQ_URL : NATS_URL,
      Options: nowhere.options,
    });
    await emitEvent(t, 'AccessRequestApproved', { ID: 13 });
    let d: any;
    await eventually(
      async () => {
        [d] = await deliveries(t, w.ID);
        return !!d && d.AttemptCount >= 1;
      },
      20_000,
      'an attempt',
    );
    const detail = await delivery(t, w.ID, d.ID);
    expect(detail.Attempts[0]).toMatchObject({ StatusCode: null, Error: 'unroutable' });
    expect(detail.Attempts[0].ResponseBody).toMatch(
      broker.type === 'rabbitmq' ? /no queue is bound/ : /no JetStream stream captures subject/,
    );
    expect(detail.Status).not.toBe('delivered');
  }, 60_000);

  it('keeps event order for an Ordered webhook and holds a RateLimit', async () => {
    const target = closer.adopt(await broker.target());
    await create(t, { Type: broker.type, URL: target.url, Options: target.options, Ordered: true, RateLimit: 4 });
    const before = await metric(t, /^webhook_rate_limited_total /);
    for (let i = 0; i < 12; i++) await emitEvent(t, 'AccessRequestApproved', { ID: i });
    await target.waitFor(12, 30_000);
    const ids = (await target.received()).map((m) => JSON.parse(m.body).Message.ID);
    expect(ids).toEqual([...Array(12).keys()]);
    expect(await metric(t, /^webhook_rate_limited_total /)).toBeGreaterThan(before);
  }, 60_000);
});

describe('broker webhooks are switched off like any webhook', () => {
  const closer = closeAfterEach();
  it.each(BROKERS)(
    'disables a $type webhook whose broker stays down, and tells an operator webhook',
    async (broker) => {
      const t = closer.adopt(
        await startService({
          vars: { WEBHOOK_DISABLE_AFTER: '3s', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1,1,1,1,1,1,1,1,1' },
        }),
      );
      const ops = closer.adopt(await broker.target());
      await create(t, { Type: broker.type, URL: ops.url, Options: ops.options, Events: ['WebhookDisabled'] });
      const w = await create(t, {
        Name: 'down',
        Type: broker.type,
        URL: broker.down(await closedPort()),
        Options: ops.options,
      });
      await emitEvent(t, 'AccessRequestApproved', { ID: 1 });
      await eventually(
        async () => (await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.Active === false,
        30_000,
        'switched off',
      );
      expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body).toMatchObject({ DisabledReason: 'failing' });
      await ops.waitFor(1, 20_000);
      expect(JSON.parse((await ops.received())[0].body)).toMatchObject({
        Event: 'WebhookDisabled',
        Message: { WebhookID: w.ID },
      });
    },
    90_000,
  );
});

describe('destination configuration is checked on write', () => {
  const t = useService();

  const refused = async (body: Record<string, unknown>, method: 'post' | 'put' = 'post', id?: string) => {
    const res =
      method === 'post'
        ? await t.portal.post('/portal-api/webhooks', { Name: 'x', Events: ['AccessRequestApproved'], ...body })
        : await t.portal.put(`/portal-api/webhooks/${id}`, body);
    expect(res.status).toBe(422);
    return JSON.stringify(res.body);
  };

  it('answers 422 naming the problem: unknown type, wrong scheme for the type, missing or unknown options', async () => {
    expect(await refused({ Type: 'kafka', URL: 'kafka://x' })).toContain('Type must be one of http, rabbitmq, nats');
    expect(await refused({ Type: 'rabbitmq', URL: 'https://mq.example.com' })).toContain(
      'URL must be an absolute amqp(s) URL for Type rabbitmq',
    );
    expect(await refused({ Type: 'nats', URL: 'amqp://mq.example.com' })).toContain(
      'URL must be an absolute nats:// or tls:// URL for Type nats',
    );
    expect(await refused({ Type: 'nats', URL: 'nats://n.example.com:4222' })).toContain(
      'Options.Subject is required for Type nats',
    );
    expect(await refused({ Type: 'nats', URL: 'nats://n.example.com', Options: { Subject: 'a.*' } })).toContain(
      'Options.Subject must be dot-separated tokens',
    );
    expect(await refused({ Type: 'rabbitmq', URL: 'amqp://mq.example.com', Options: { Queue: 'q' } })).toContain(
      'Options.Queue is not an option of Type rabbitmq',
    );
    expect(await refused({ URL: 'amqp://mq.example.com' })).toContain('URL must be an absolute http(s) URL');
    expect(await refused({ Type: 'http', URL: 'https://h.example.com', Options: { Exchange: 'x' } })).toContain(
      'Options.Exchange is not an option of Type http',
    );
    // named like Object's methods: refused as any other unknown option, not dropped
    for (const name of ['toString', 'valueOf', 'hasOwnProperty'])
      expect(
        await refused({ Type: 'rabbitmq', URL: 'amqp://mq.example.com', Options: { Exchange: 'x', [name]: 'y' } }),
      ).toContain(`Options.${name} is not an option of Type rabbitmq`);
    expect(await refused({ Type: 'rabbitmq', URL: 'amqp://mq.example.com', Options: 'x' })).toContain(
      'Options must be an object',
    );

    const w = await create(t, {
      Type: 'rabbitmq',
      URL: 'amqp://app:s3cret@mq.example.com:5672/prod',
      Options: { Exchange: 'portal' },
    });
    expect(await refused({ Type: 'nats' }, 'put', w.ID)).toContain('URL is required when Type changes');
    expect(await refused({ URL: 'https://h.example.com' }, 'put', w.ID)).toContain(
      'URL must be an absolute amqp(s) URL',
    );
  });

  it('masks credentials in every answer and keeps them when the masked URL comes back on PUT', async () => {
    const w = await create(t, {
      Type: 'rabbitmq',
      URL: 'amqp://app:s3cret@mq.example.com:5672/prod',
      Options: { Exchange: 'portal' },
    });
    const listed = (await t.portal.get('/portal-api/webhooks')).body.find((x: any) => x.ID === w.ID);
    expect(listed.URL).toBe('amqp://app:***@mq.example.com:5672/prod');
    expect(JSON.stringify(listed)).not.toContain('s3cret');
    const put = await t.portal.put(`/portal-api/webhooks/${w.ID}`, {
      URL: listed.URL,
      Options: { Exchange: 'portal', RoutingKey: 'k' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      URL: 'amqp://app:***@mq.example.com:5672/prod',
      Options: { Exchange: 'portal', RoutingKey: 'k' },
    });
    const [row] = await t.db.query(`SELECT destination_encrypted FROM webhooks WHERE id = $1`, [w.ID]);
    const { SecretBox } = await import('../../src/common/crypto/secret-box');
    expect(t.app.get(SecretBox).decrypt(row.destination_encrypted)).toBe('amqp://app:s3cret@mq.example.com:5672/prod');
    // back to http: the broker's sealed URL and options go
    const http = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Type: 'http', URL: 'https://h.example.com/x' });
    expect(http.status).toBe(200);
    expect(http.body.Type).toBeUndefined();
    expect(http.body.Options).toBeUndefined();
    const [after] = await t.db.query(`SELECT destination_encrypted, destination_options FROM webhooks WHERE id = $1`, [
      w.ID,
    ]);
    expect(after).toEqual({ destination_encrypted: null, destination_options: {} });
  });
});
