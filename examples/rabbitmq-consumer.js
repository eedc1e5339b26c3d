// A RabbitMQ subscriber: verifies each message's Standard Webhooks signature exactly as an HTTP receiver
// does (same body, same webhook-* headers, carried as AMQP headers), handles each webhook-id once, acks it.
// Run: AMQP_URL=amqp://guest:guest@127.0.0.1:5672/ EXCHANGE=portal QUEUE=approvals WEBHOOK_SECRET=whsec_... \
//      node examples/rabbitmq-consumer.js
const amqp = require('amqplib');
const { Webhook } = require('standardwebhooks');

async function main() {
  const wh = new Webhook(process.env.WEBHOOK_SECRET); // the webhook's Secret, "whsec_..."
  const exchange = process.env.EXCHANGE ?? 'portal';
  const queue = process.env.QUEUE ?? 'approvals';
  const connection = await amqp.connect(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672/');
  const channel = await connection.createChannel();
  // the exchange the webhook publishes to (its Options.Exchange), and a queue bound to the routing keys wanted
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: true });
  await channel.bindQueue(queue, exchange, process.env.BINDING ?? '#');
  const seen = new Set(); // use a store with a TTL in production
  await channel.consume(queue, (msg) => {
    if (!msg) return;
    const headers = {};
    for (const [name, value] of Object.entries(msg.properties.headers ?? {})) headers[name] = String(value);
    let event;
    try {
      event = wh.verify(msg.content.toString('utf8'), headers); // throws on a bad signature or an old timestamp
    } catch {
      return channel.nack(msg, false, false); // not from the service: drop it (or dead-letter it)
    }
    const id = msg.properties.messageId; // the delivery id, also headers['webhook-id']: the same on every retry
    if (!seen.has(id)) {
      seen.add(id);
      console.log(JSON.stringify(event));
    }
    channel.ack(msg);
  });
  console.error(`waiting for events on exchange ${exchange}, queue ${queue}`);
  const stop = () => connection.close().finally(() => process.exit(0));
  process.on('SIGINT', stop).on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
