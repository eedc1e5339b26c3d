import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { emitEvent } from '../helpers/events';
import { brokerPrefix, RABBITMQ_URL } from '../helpers/brokers';
import { eventually } from '../helpers/sink';
import { startTestApp, TestApp } from '../helpers/test-app';
import { TEST_SECRETS } from '../helpers/test-env';

// The README's RabbitMQ subscriber, end to end: a webhook of Type rabbitmq, the example consumer verifying
// what it receives, an approval event in between.
describe('examples/rabbitmq-consumer.js', () => {
  let t: TestApp;
  let consumer: ChildProcess | undefined;
  const name = `${brokerPrefix()}${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    consumer?.kill('SIGKILL');
    const model = await connect(RABBITMQ_URL);
    const ch = await model.createChannel();
    await ch.deleteQueue(name);
    await ch.deleteExchange(name);
    await model.close();
    await t?.close();
  });

  it('receives an approval published by a rabbitmq webhook and verifies its signature', async () => {
    const res = await t.http.post(
      '/portal-api/webhooks',
      {
        Name: 'to the bus',
        Type: 'rabbitmq',
        URL: RABBITMQ_URL,
        Options: { Exchange: name, RoutingKey: 'portal.access.approved' },
        Events: ['AccessRequestApproved'],
      },
      { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
    );
    expect(res.status).toBe(201);
    let out = '';
    let err = '';
    consumer = spawn(process.execPath, [join(__dirname, '..', '..', 'examples', 'rabbitmq-consumer.js')], {
      env: { ...process.env, AMQP_URL: RABBITMQ_URL, EXCHANGE: name, QUEUE: name, WEBHOOK_SECRET: res.body.Secret },
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
