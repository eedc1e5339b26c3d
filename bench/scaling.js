'use strict';
// Worker scaling: deliveries per second with 1, 2 and 3 worker processes (BENCH_SCALING_WORKERS) against the
// same loopback receiver, and CPU per delivery by process group. For each count: one API process and K
// worker processes on a fresh database; the delivery queue is paused while BENCH_SCALING_N approvals go
// through the API (the relay turns them into deliveries and jobs that wait), then the queue is resumed and
// the clock runs from then to the last receipt: the measured work is the dispatch itself (claim, sign, send,
// record) by K processes sharing one Postgres and one Redis.
const { join } = require('node:path');
const { Queue } = require('bullmq');
const { request } = require('undici');
const { hashTaggedPrefix } = require('../dist/queue/redis-connection');
const infra = require('./lib/infra');
const { startService, freePort } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const {
  connect,
  portal,
  seedAccessRequests,
  outboxIdle,
  warmUp,
  checkServiceDeliveries,
  watchBackends,
} = require('./lib/client');
const { spawnTracked, stop } = require('./lib/procs');
const { ROOT, now, pool, round, sleep, watchCpu } = require('./lib/util');

const MAIN = process.env.BENCH_SERVICE_MAIN || join(ROOT, 'dist', 'main.js');

function settings(env = process.env) {
  const n = Number(env.BENCH_SCALING_N || 10000);
  return {
    n,
    counts: (env.BENCH_SCALING_WORKERS || '1,2,3')
      .split(',')
      .map(Number)
      .filter((k) => k > 0),
    inFlight: Number(env.BENCH_INFLIGHT || 64),
    warmup: Math.min(500, Math.max(100, Math.round(n / 20))),
    timeoutMs: Math.max(180_000, n * 30),
  };
}

async function startWorker(service, i) {
  const port = await freePort();
  const child = spawnTracked(`worker${i}`, process.execPath, [MAIN], {
    cwd: ROOT,
    env: { ...service.env, ROLE: 'worker', PORT: String(port) },
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`worker${i} exited with ${child.exitCode}:\n${child.tail.join('\n')}`);
    try {
      const res = await request(`http://127.0.0.1:${port}/health/ready`);
      await res.body.text();
      if (res.statusCode === 200) return child;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`worker${i} not ready:\n${child.tail.join('\n')}`);
    await sleep(100);
  }
}

async function measure(s, k, receiver) {
  const service = await startService({ tag: `sc${k}`, worker: false });
  const workers = [];
  const http = connect(service.api.url, s.inFlight);
  const queue = new Queue('deliveries', { connection: infra.redisOptions(), prefix: hashTaggedPrefix(service.prefix) });
  try {
    for (let i = 0; i < k; i++) workers.push(await startWorker(service, i));
    const p = portal(service, http);
    await p.createWebhook({ Name: 'scaling', URL: `${receiver.url}/hook` });
    const app = await p.createApp();
    const ids = await seedAccessRequests(service, app.ID, s.warmup + s.n);
    await outboxIdle(service);
    const warmed = await warmUp(p, ids.slice(0, s.warmup), receiver, 1, 16);

    // the backlog: every delivery created and queued, none sent yet
    await queue.pause();
    let failures = 0;
    await pool(s.n, s.inFlight, async (i) => {
      if ((await p.approve(ids[s.warmup + i])) !== 200) failures++;
    });
    await outboxIdle(service);
    receiver.reset();

    const cpu = watchCpu(Object.fromEntries(workers.map((w, i) => [`worker${i}`, w.pid])));
    const backends = await watchBackends(service.db.url);
    const t0 = now();
    await queue.resume();
    await receiver.waitUntil(
      () => receiver.receipts.size >= s.n - failures,
      s.timeoutMs,
      `every delivery with ${k} worker(s)`,
    );
    let last = 0;
    for (const r of receiver.receipts.values()) if (r.t > last) last = r.t;
    const spent = { ...cpu.stop(), postgres: await backends.stop() };
    const seconds = (last - t0) / 1000;
    const delivered = receiver.receipts.size;
    await checkServiceDeliveries(service, warmed + s.n - failures, `delivery log with ${k} worker(s)`);
    const workerCpu = workers.reduce((sum, _, i) => sum + spent[`worker${i}`], 0);
    const ms = (v) => round((v * 1000) / delivered, 2);
    return {
      workers: k,
      deliveries: delivered,
      failedApprovals: failures,
      duplicates: receiver.duplicates,
      seconds: round(seconds, 2),
      deliveriesPerSecond: round(delivered / seconds, 0),
      cpuMsPerDelivery: {
        workers: ms(workerCpu),
        postgres: ms(spent.postgres),
        redis: ms(spent.redis),
        machine: ms(spent.machineBusy),
      },
      machineBusyShare: round(spent.machineBusy / (spent.machineBusy + spent.machineIdle), 2),
      cpuSeconds: spent,
    };
  } finally {
    await queue.close().catch(() => undefined);
    await http.close().catch(() => undefined);
    await Promise.all(workers.map((w) => stop(w)));
    await service.stop();
  }
}

async function run() {
  const s = settings();
  const receiver = await startReceiver();
  const measured = [];
  try {
    for (const k of s.counts) measured.push(await measure(s, k, receiver));
  } finally {
    await receiver.close();
  }
  const one = measured.find((m) => m.workers === 1) ?? measured[0];
  const rows = measured.map((m) => ({
    'worker processes': m.workers,
    N: m.deliveries,
    'deliveries/s': m.deliveriesPerSecond,
    'vs 1 worker': round(m.deliveriesPerSecond / one.deliveriesPerSecond, 2),
    'CPU ms/delivery: workers': m.cpuMsPerDelivery.workers,
    Postgres: m.cpuMsPerDelivery.postgres,
    Redis: m.cpuMsPerDelivery.redis,
    'machine (everyone)': m.cpuMsPerDelivery.machine,
    'machine busy': `${Math.round(m.machineBusyShare * 100)} %`,
  }));
  return {
    results: [
      {
        scenario: 'scaling',
        title: `Worker scaling: one receiver, ${s.n} queued deliveries, dispatch time to the last receipt`,
        rows,
        data: { settings: s, measured },
      },
    ],
  };
}

module.exports = { run, settings };
