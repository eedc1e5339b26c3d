import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync, unlinkSync } from 'node:fs';
import { connect as netConnect, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChannelModel, connect as amqpConnect, ConsumeMessage } from 'amqplib';
import { jetstreamManager, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { NatsConnection } from '@nats-io/nats-core';
import { connect as natsConnect } from '@nats-io/transport-node';
import { ENV_RUN_ID } from '../setup/test-infra';
import { eventually } from './eventually';

/** The machine's brokers (started by .ci/run when they are not running). */
export const RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672/';
export const NATS_URL = 'nats://127.0.0.1:4222';

/** Names of this run's broker objects start with this, so teardown can find any a spec left behind. */
export function brokerPrefix(): string {
  return `gwm-test-${process.env[ENV_RUN_ID] ?? 'x'}-`;
}

/** Where the names of this run's RabbitMQ exchanges and queues are written as specs make them. */
function rabbitNamesFile(): string {
  return join(tmpdir(), `${brokerPrefix()}rabbitmq-names`);
}

/**
 * A name for a RabbitMQ exchange or queue of this run (a spec must delete what it makes under it): recorded, so
 * the teardown can tell whether a spec left it behind. AMQP has no listing without the management plugin.
 */
export function rabbitName(): string {
  const name = `${brokerPrefix()}${randomBytes(4).toString('hex')}`;
  appendFileSync(rabbitNamesFile(), `${name}\n`);
  return name;
}

/** The names rabbitName gave in this run, forgotten now. */
export function takeRabbitNames(): string[] {
  const file = rabbitNamesFile();
  if (!existsSync(file)) return [];
  const names = [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))];
  unlinkSync(file);
  return names;
}

/**
 * Which of `names` are still an exchange or a queue on the broker (each deleted now), found by passive
 * declarations: for the teardown's hygiene check.
 */
export async function takeLeftoverRabbitObjects(names: string[]): Promise<string[]> {
  if (names.length === 0) return [];
  let model: ChannelModel;
  try {
    model = await amqpConnect(RABBITMQ_URL, { timeout: 2000 });
  } catch {
    return [];
  }
  const left: string[] = [];
  try {
    for (const name of names) {
      for (const kind of ['queue', 'exchange'] as const) {
        // a passive declaration of what does not exist closes its channel (404): one channel per question
        const ch = await model.createChannel();
        ch.on('error', () => undefined);
        try {
          if (kind === 'queue') await ch.checkQueue(name);
          else await ch.checkExchange(name);
        } catch (err) {
          // another connection's exclusive queue answers 405: it is there too
          if (!/RESOURCE_LOCKED|405/.test(String((err as Error).message))) continue;
        }
        left.push(`${kind} ${name}`);
        const cleaner = await model.createChannel();
        cleaner.on('error', () => undefined);
        if (kind === 'queue') await cleaner.deleteQueue(name).catch(() => undefined);
        else await cleaner.deleteExchange(name).catch(() => undefined);
        await cleaner.close().catch(() => undefined);
      }
    }
  } finally {
    await model.close().catch(() => undefined);
  }
  return left;
}

/** A loopback port nothing listens on: a broker that is down. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** One message as a subscriber receives it: body, headers (as strings) and message id. */
export interface BrokerMessage {
  body: string;
  headers: Record<string, string>;
  messageId: string | undefined;
}

/**
 * A topic exchange of its own with one queue bound to every routing key, and a consumer collecting what
 * arrives. `close()` deletes both.
 */
export class RabbitTopic {
  readonly messages: (BrokerMessage & { routingKey: string })[] = [];

  private constructor(
    private readonly model: ChannelModel,
    readonly exchange: string,
    readonly queue: string,
  ) {}

  static async create(bindingKey = '#'): Promise<RabbitTopic> {
    const model = await amqpConnect(RABBITMQ_URL);
    const name = rabbitName();
    const ch = await model.createChannel();
    await ch.assertExchange(name, 'topic', { durable: false, autoDelete: false });
    await ch.assertQueue(name, { durable: false, exclusive: true });
    await ch.bindQueue(name, name, bindingKey);
    const t = new RabbitTopic(model, name, name);
    await ch.consume(
      name,
      (m: ConsumeMessage | null) => {
        if (!m) return;
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(m.properties.headers ?? {})) headers[k] = String(v);
        t.messages.push({
          body: m.content.toString('utf8'),
          headers,
          messageId: m.properties.messageId,
          routingKey: m.fields.routingKey,
        });
      },
      { noAck: true },
    );
    return t;
  }

  /** An exchange of its own that no queue is bound to (anything published to it is unroutable). */
  static async bareExchange(): Promise<{ name: string; close(): Promise<void> }> {
    const model = await amqpConnect(RABBITMQ_URL);
    const name = rabbitName();
    const ch = await model.createChannel();
    await ch.assertExchange(name, 'direct', { durable: false });
    return {
      name,
      close: async () => {
        await ch.deleteExchange(name);
        await model.close();
      },
    };
  }

  async waitFor(n: number, ms = 20_000): Promise<void> {
    await eventually(async () => this.messages.length >= n, ms, `${n} message(s) on exchange ${this.exchange}`);
  }

  async close(): Promise<void> {
    const ch = await this.model.createChannel();
    await ch.deleteQueue(this.queue);
    await ch.deleteExchange(this.exchange);
    await this.model.close();
  }
}

/** A JetStream stream of its own capturing `<subject>.>`; `close()` deletes it. */
export class JetStreamSubject {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    readonly stream: string,
    /** Publish to `${subject}.<anything>`. */
    readonly subject: string,
  ) {}

  static async create(): Promise<JetStreamSubject> {
    const nc = await natsConnect({ servers: NATS_URL.replace('nats://', '') });
    const jsm = await jetstreamManager(nc);
    const id = randomBytes(4).toString('hex');
    const stream = `${brokerPrefix()}${id}`.replace(/[^A-Za-z0-9_-]/g, '_');
    const subject = `gwmtest.${id}`;
    await jsm.streams.add({ name: stream, subjects: [`${subject}.>`], duplicate_window: 120_000_000_000 });
    return new JetStreamSubject(nc, jsm, stream, subject);
  }

  async count(): Promise<number> {
    return (await this.jsm.streams.info(this.stream)).state.messages;
  }

  async messages(): Promise<(BrokerMessage & { subject: string })[]> {
    const out: (BrokerMessage & { subject: string })[] = [];
    const n = await this.count();
    for (let seq = 1; seq <= n; seq++) {
      const m: StoredMsg | null = await this.jsm.streams.getMessage(this.stream, { seq });
      if (!m) continue;
      const headers: Record<string, string> = {};
      for (const k of m.header.keys()) headers[k.toLowerCase()] = m.header.get(k);
      out.push({ body: m.string(), headers, messageId: m.header.get('Nats-Msg-Id'), subject: m.subject });
    }
    return out;
  }

  async waitFor(n: number, ms = 20_000): Promise<void> {
    await eventually(async () => (await this.count()) >= n, ms, `${n} message(s) in stream ${this.stream}`);
  }

  async close(): Promise<void> {
    await this.jsm.streams.delete(this.stream);
    await this.nc.close();
  }
}

/** Streams of this run a spec left behind (deleted now): for the teardown's hygiene check. */
export async function takeLeftoverStreams(): Promise<string[]> {
  let nc: NatsConnection;
  try {
    nc = await natsConnect({ servers: NATS_URL.replace('nats://', ''), timeout: 2000 });
  } catch {
    return [];
  }
  try {
    const jsm = await jetstreamManager(nc);
    const prefix = brokerPrefix().replace(/[^A-Za-z0-9_-]/g, '_');
    const left: string[] = [];
    for await (const s of jsm.streams.list()) {
      if (s.config.name.startsWith(prefix)) {
        left.push(`stream ${s.config.name}`);
        await jsm.streams.delete(s.config.name);
      }
    }
    return left;
  } finally {
    await nc.close();
  }
}

/**
 * A loopback TCP proxy in front of a broker: a webhook's URL names its port, so the spec sees the connections
 * the service really opens and closes. `delayMs` holds back what the broker sends (its confirmations), to keep
 * an attempt in flight.
 */
export class BrokerProxy {
  /** Connections the service has open through the proxy now, and ever opened. */
  open = 0;
  opened = 0;
  delayMs = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(brokerPort: number): Promise<BrokerProxy> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const proxy = new BrokerProxy(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => proxy.relay(client, brokerPort));
    return proxy;
  }

  private relay(client: Socket, brokerPort: number): void {
    this.open++;
    this.opened++;
    const upstream = netConnect(brokerPort, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    let closed = false;
    const end = () => {
      if (closed) return;
      closed = true;
      this.open--;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (this.delayMs > 0) setTimeout(() => client.write(chunk), this.delayMs);
      else client.write(chunk);
    });
    for (const s of [client, upstream]) {
      s.on('close', end);
      s.on('error', end);
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
