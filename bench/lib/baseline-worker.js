'use strict';
// The baseline's worker process: a bare BullMQ Worker that POSTs each job's body with undici. No Postgres.
// Configured by env: BASE_REDIS_URL, BASE_PREFIX, BASE_QUEUE, BASE_CONCURRENCY.
const { Worker } = require('bullmq');
const { Agent, request } = require('undici');
const { redisOptions } = require('./infra');

const concurrency = Number(process.env.BASE_CONCURRENCY || 64);
const agent = new Agent({
  connections: Math.max(8, concurrency),
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 60_000,
  pipelining: 1,
});

const worker = new Worker(
  process.env.BASE_QUEUE || 'baseline',
  async (job) => {
    const res = await request(job.data.url, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': job.data.id },
      body: job.data.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    await res.body.dump();
    if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`status ${res.statusCode}`);
  },
  { connection: redisOptions(), prefix: process.env.BASE_PREFIX, concurrency, autorun: true },
);
worker.on('error', (err) => process.stderr.write(`baseline worker: ${err.message}\n`));
worker.waitUntilReady().then(() => process.stdout.write('READY\n'));

const shutdown = () => {
  worker
    .close()
    .then(() => agent.close())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
