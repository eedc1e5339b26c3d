'use strict';
// The baseline's worker process: a bare BullMQ Worker that POSTs each job's body with undici. No Postgres, unless
// BASE_DATABASE_URL is set (the fan-out's "bare + minimal log", see lib/baseline.js): then each attempt is recorded
// (an attempt row, the delivery's new status) before its job completes, the attempts of the jobs running at the
// same time in one statement (the service's Batcher: one statement in flight; those that arrive meanwhile share
// the next).
// Configured by env: REDIS_URL, BASE_PREFIX, BASE_QUEUE, BASE_CONCURRENCY, BASE_DATABASE_URL.
const { join } = require('node:path');
const { Worker } = require('bullmq');
const { Pool } = require('pg');
const { Agent, request } = require('undici');
const { redisOptions } = require('./infra');
const { Batcher } = require(join(__dirname, '..', '..', 'dist', 'webhooks', 'worker', 'batcher.js'));

const concurrency = Number(process.env.BASE_CONCURRENCY || 64);
const agent = new Agent({
  connections: Math.max(8, concurrency),
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 60_000,
  pipelining: 1,
});
const db = process.env.BASE_DATABASE_URL ? new Pool({ connectionString: process.env.BASE_DATABASE_URL, max: 4 }) : null;

const RECORD = {
  name: 'minimal_log_record',
  text: `WITH v AS (SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[], $4::int[], $5::text[])
                      AS v(id, started_at, status_code, duration_ms, status)),
              d AS (UPDATE deliveries d SET status = v.status, attempt_count = 1 FROM v
                     WHERE d.id = v.id AND d.attempt_count = 0 RETURNING d.id)
         INSERT INTO attempts (delivery_id, number, started_at, status_code, duration_ms)
         SELECT v.id, 1, v.started_at, v.status_code, v.duration_ms FROM v JOIN d USING (id)`,
};

// the service's own natural batching (as its worker records attempts: one statement in flight)
const records = db
  ? new Batcher(
      async (attempts) => {
        const column = (k) => attempts.map((a) => a[k]);
        await db.query({
          ...RECORD,
          values: [column('id'), column('startedAt'), column('statusCode'), column('durationMs'), column('status')],
        });
        return attempts.map(() => undefined);
      },
      { maxBatch: concurrency, maxConcurrent: 1 },
    )
  : null;

const worker = new Worker(
  process.env.BASE_QUEUE || 'baseline',
  async (job) => {
    const startedAt = new Date();
    const res = await request(job.data.url, {
      dispatcher: agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': job.data.id },
      body: job.data.body,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    await res.body.dump();
    const ok = res.statusCode >= 200 && res.statusCode < 300;
    if (records) {
      await records.call({
        id: job.data.id,
        startedAt,
        statusCode: res.statusCode,
        durationMs: Date.now() - startedAt.getTime(),
        status: ok ? 'delivered' : 'failed',
      });
    }
    if (!ok) throw new Error(`status ${res.statusCode}`);
  },
  { connection: redisOptions(), prefix: process.env.BASE_PREFIX, concurrency, autorun: true },
);
worker.on('error', (err) => process.stderr.write(`baseline worker: ${err.message}\n`));
worker.waitUntilReady().then(() => process.stdout.write('READY\n'));

const shutdown = () => {
  worker
    .close()
    .then(() => agent.close())
    .then(() => db?.end())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
