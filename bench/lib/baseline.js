'use strict';
// The baseline of the dispatch scenarios: a bare BullMQ queue (producer in the bench process) and worker
// (lib/baseline-worker.js, its own process) POSTing the same body with undici to the same receiver,
// with the same concurrency, and no Postgres.
const { join } = require('node:path');
const { Queue } = require('bullmq');
const infra = require('./infra');
const { spawnTracked, stop } = require('./procs');

async function startBaseline({ concurrency = 64, tag = 'base' } = {}) {
  const prefix = infra.usePrefix(infra.queuePrefix(tag));
  const queueName = 'baseline';
  const child = spawnTracked('baseline-worker', process.execPath, [join(__dirname, 'baseline-worker.js')], {
    env: {
      PATH: process.env.PATH,
      REDIS_URL: infra.REDIS_URL,
      BASE_PREFIX: prefix,
      BASE_QUEUE: queueName,
      BASE_CONCURRENCY: String(concurrency),
    },
  });
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
    /** Adds one job; resolves when Redis has it. */
    add: (id, url, body) => queue.add('send', { id, url, body }, { ...opts, jobId: id }),
    addBulk: (jobs) => queue.addBulk(jobs.map((j) => ({ name: 'send', data: j, opts: { ...opts, jobId: j.id } }))),
    async stop() {
      await queue.close().catch(() => undefined);
      await stop(child);
      await infra.deletePrefix(prefix).catch((err) => console.error(`clean ${prefix}: ${err.message}`));
    },
  };
}

module.exports = { startBaseline };
