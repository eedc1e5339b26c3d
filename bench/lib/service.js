'use strict';
// Starts the service under test (`node dist/main.js`) as child processes: an API process and a worker
// process (or one ROLE=all process) on a fresh database and queue prefix.
const { randomBytes } = require('node:crypto');
const { existsSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { createServer } = require('node:net');
const { join } = require('node:path');
const { request } = require('undici');
const infra = require('./infra');
const { nodeArgs, spawnTracked, stop } = require('./procs');
const { ROOT, sleep } = require('./util');

// BENCH_SERVICE_MAIN: another build of the service to measure (e.g. for before/after comparisons)
const MAIN = process.env.BENCH_SERVICE_MAIN || join(ROOT, 'dist', 'main.js');
// BENCH_NODE_ARGS: extra node flags for the service's processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
const NODE_ARGS = nodeArgs('BENCH_NODE_ARGS');
/** A port the kernel says is free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitReady(child, url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`${child.label} exited with ${child.exitCode}:\n${child.tail.join('\n')}`);
    try {
      const res = await request(`${url}/health/ready`);
      await res.body.text();
      if (res.statusCode === 200) return;
    } catch {
      /* not listening yet */
    }
    await sleep(100);
  }
  throw new Error(`${child.label} not ready after ${timeoutMs} ms:\n${child.tail.join('\n')}`);
}

/**
 * Starts the service. opts.split (default true): one ROLE=api and one ROLE=worker process; else one ROLE=all.
 * opts.worker (default true): start the worker at all. Returns { api, worker, env, db, prefix, stop() }.
 */
async function startService(opts = {}) {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm run bench does)`);
  const db = await infra.createDatabase(opts.tag);
  const prefix = infra.usePrefix(infra.queuePrefix(opts.tag));
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    REDIS_URL: infra.REDIS_URL,
    QUEUE_PREFIX: prefix,
    GATEWAY_SECRET: `gw-${randomBytes(12).toString('hex')}`,
    ADMIN_SECRET: `adm-${randomBytes(12).toString('hex')}`,
    PORTAL_API_TOKEN: `portal-${randomBytes(12).toString('hex')}`,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'gwm-bench-')),
    ...(process.env.WEBHOOK_CONCURRENCY ? { WEBHOOK_CONCURRENCY: process.env.WEBHOOK_CONCURRENCY } : {}),
    ...(opts.env ?? {}),
  };
  const procs = [];
  const start = async (role) => {
    const port = await freePort();
    const child = spawnTracked(`${role}`, process.execPath, [...(opts.nodeArgs ?? NODE_ARGS), MAIN], {
      cwd: ROOT,
      env: { ...env, ROLE: role, PORT: String(port) },
    });
    procs.push(child);
    const url = `http://127.0.0.1:${port}`;
    await waitReady(child, url);
    return { child, pid: child.pid, url };
  };
  const service = {
    env,
    db,
    prefix,
    /** Stops the processes but keeps the database (e.g. for a baseline that reads the same rows). */
    async stopProcesses() {
      await Promise.all(procs.map((p) => stop(p)));
    },
    async stop() {
      await Promise.all(procs.map((p) => stop(p)));
      await infra.dropDatabase(db.name).catch((err) => console.error(`drop ${db.name}: ${err.message}`));
      await infra.deletePrefix(prefix).catch((err) => console.error(`clean ${prefix}: ${err.message}`));
      rmSync(env.DATA_DIR, { recursive: true, force: true });
    },
  };
  try {
    if (opts.split === false) {
      service.api = await start('all');
      service.worker = service.api;
    } else {
      service.api = await start('api');
      if (opts.worker !== false) service.worker = await start('worker');
    }
  } catch (err) {
    await service.stop();
    throw err;
  }
  return service;
}

module.exports = { startService, freePort };
