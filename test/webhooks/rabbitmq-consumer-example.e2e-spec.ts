import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { emitEvent } from '../helpers/events';
import { RABBITMQ_URL, rabbitName } from '../helpers/brokers';
import { createWebhook } from '../helpers/portal';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

// The README's RabbitMQ subscriber, end to end: a webhook of Type rabbitmq, the example consumer verifying
// what it receives, an approval event in between.
describe('examples/rabbitmq-consumer.js', () => {
  const t = useService();
  let consumer: ChildProcess | undefined;
  const name = rabbitName();

  afterAll(async () => {
    consumer?.kill('SIGKILL');
    const model = await connect(RABBITMQ_URL);
    const ch = await model.createChannel();
    await ch.deleteQueue(name);
    await ch.deleteExchange(name);
    await model.close();
  });

  it('receives an approval published by a rabbitmq webhook and verifies its signature', async () => {
    const webhook = await createWebhook(t.portal, {
      Name: 'to the bus',
      Type: 'rabbitmq',
      URL: RABBITMQ_URL,
      Options: { Exchange: name, RoutingKey: 'portal.access.approved' },
    });
    let out = '';
    let err = '';
    consumer = spawn(process.execPath, [join(__dirname, '..', '..', 'examples', 'rabbitmq-consumer.js')], {
      env: { ...process.env, AMQP_URL: RABBITMQ_URL, EXCHANGE: name, QUEUE: name, WEBHOOK_SECRET: webhook.Secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    consumer.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    consumer.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    await eventually(async () => err.includes('waiting for events'), 15_000, 'the consumer ready');

    await emitEvent(t, 'AccessRequestApproved', { ID: 77, Status: 'approved' });
    await eventually(async () => out.includes('\n'), 20_000, 'the consumer printing the event');
    expect(JSON.parse(out.split('\n')[0])).toEqual({
      Event: 'AccessRequestApproved',
      Message: { ID: 77, Status: 'approved' },
      Timestamp: expect.any(String),
    });
  }, 60_000);
});
