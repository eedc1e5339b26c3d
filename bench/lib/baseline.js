'use strict';
// The baseline of the dispatch scenarios: a bare BullMQ queue (producer in the bench process) and worker
// (lib/baseline-worker.js, its own process) POSTing the same body with undici to the same receiver,
// with the same concurrency, and no Postgres.
// With `minimalLog` ("bare + minimal log" in the fan-out), the same pipeline also keeps the least delivery log that
// any pipeline recording its deliveries in Postgres must write: the producer inserts one row per delivery in one
// statement before it adds the jobs, and the worker records each attempt (an attempt row, the delivery's new
// status) before its job completes, with the attempts of the jobs running at the same time in one statement. No
// outbox, no claim, no signature, no index beyond the two primary keys: less than the service's guarantees need.
const { join } = require('node:path');
const { Queue } = require('bullmq');
const { Pool } = require('pg');
const infra = require('./infra');
const { nodeArgs, spawnTracked, stop } = require('./procs');

const MINIMAL_LOG_SCHEMA = `
  CREATE TABLE deliveries (id text PRIMARY KEY, status text NOT NULL DEFAULT 'pending', attempt_count int NOT NULL DEFAULT 0);
  CREATE TABLE attempts (delivery_id text NOT NULL, number int NOT NULL, started_at timestamptz NOT NULL,
                         status_code int, duration_ms int NOT NULL, PRIMARY KEY (delivery_id, number));`;

async function startBaseline({ concurrency = 64, tag = 'base', minimalLog = false } = {}) {
  const prefix = infra.usePrefix(infra.queuePrefix(tag));
  const queueName = 'baseline';
  const db = minimalLog ? await infra.createDatabase(tag) : null;
  const pool = db ? new Pool({ connectionString: db.url, max: 2 }) : null;
  if (pool) await pool.query(MINIMAL_LOG_SCHEMA);
  const child = spawnTracked(
    'baseline-worker',
    process.execPath,
    [...nodeArgs('BENCH_BASE_NODE_ARGS'), join(__dirname, 'baseline-worker.js')],
    {
      env: {
        PATH: process.env.PATH,
        REDIS_URL: infra.REDIS_URL,
        BASE_PREFIX: prefix,
        BASE_QUEUE: queueName,
        BASE_CONCURRENCY: String(concurrency),
        ...(db ? { BASE_DATABASE_URL: db.url } : {}),
      },
    },
  );
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseline worker not ready:\n${child.tail.join('\n')}`)), 30_000);
    child.stdout.on('data', (b) => {
      if (b.toString().includes('READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`baseline worker exited with ${code}:\n${child.tail.join('\n')}`)));
  });
  const queue = new Queue(queueName, { connection: infra.redisOptions(), prefix });
  await queue.waitUntilReady();
  const opts = { removeOnComplete: true, removeOnFail: true, attempts: 1 };
  return {
    pid: child.pid,
    /** The minimal log's database ({ name, url }), or null. */
    db,
    /** Adds one job; resolves when Redis has it. */
    add: (id, url, body) => queue.add('send', { id, url, body }, { ...opts, jobId: id }),
    /** Adds the jobs at once (with `minimalLog`, after one statement has inserted their deliveries). */
    async addBulk(jobs) {
      if (pool) await pool.query(`INSERT INTO deliveries (id) SELECT unnest($1::text[])`, [jobs.map((j) => j.id)]);
      return queue.addBulk(jobs.map((j) => ({ name: 'send', data: j, opts: { ...opts, jobId: j.id } })));
    },
    /** With `minimalLog`: how many deliveries are recorded delivered, and how many attempts there are. */
    async counts() {
      const { rows } = await pool.query(
        `SELECT (SELECT count(*) FROM deliveries WHERE status = 'delivered')::int AS delivered,
                (SELECT count(*) FROM attempts)::int AS attempts`,
      );
      return rows[0];
    },
    async stop() {
      await queue.close().catch(() => undefined);
      await stop(child);
      await pool?.end().catch(() => undefined);
      if (db) await infra.dropDatabase(db.name).catch((err) => console.error(`drop ${db.name}: ${err.message}`));
      await infra.deletePrefix(prefix).catch((err) => console.error(`clean ${prefix}: ${err.message}`));
    },
  };
}

module.exports = { startBaseline };
