'use strict';
// Dispatch throughput: N approvals through the HTTP API to one webhook whose receiver is a loopback server
// answering 200; deliveries per second from the first approval to the last receipt. Baseline: a bare BullMQ
// queue + worker + undici POST of the same body to the same receiver, same concurrency, no Postgres.
// Also reports the worker process's peak RSS during the run (the memory scenario).
const { startService } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const { startBaseline } = require('./lib/baseline');
const { connect, portal, seedAccessRequests, outboxIdle, backendPids } = require('./lib/client');
const { now, pool, round, watchMemory, watchCpu } = require('./lib/util');

const TARGET_RATIO = 0.5;
const MEMORY_TARGET_MB = 300;

function settings(env = process.env) {
  const n = Number(env.BENCH_N || 20000);
  return {
    n,
    inFlight: Number(env.BENCH_INFLIGHT || 64),
    concurrency: Number(env.WEBHOOK_CONCURRENCY || 64),
    warmup: Number(env.BENCH_WARMUP || Math.min(1000, Math.max(100, Math.round(n / 20)))),
    timeoutMs: Math.max(120_000, n * 20),
  };
}

async function ours(s, receiver) {
  const service = await startService({ tag: 'tp' });
  const http = connect(service.api.url, s.inFlight);
  try {
    const p = portal(service, http);
    await p.createWebhook({ Name: 'throughput', URL: `${receiver.url}/hook` });
    const app = await p.createApp();
    const ids = await seedAccessRequests(service, app.ID, s.warmup + s.n);
    await outboxIdle(service);

    // warm-up (not timed): JIT, connection pools, prepared plans
    receiver.reset();
    let failures = 0;
    await pool(s.warmup, s.inFlight, async (i) => {
      if ((await p.approve(ids[i])) !== 200) failures++;
    });
    await receiver.waitUntil(() => receiver.receipts.size >= s.warmup - failures, s.timeoutMs, 'warm-up deliveries');
    const sampleBody = receiver.receipts.values().next().value?.body;

    receiver.reset();
    const mem = watchMemory(service.worker.pid);
    const apiMem = watchMemory(service.api.pid);
    const cpu = watchCpu({ api: service.api.pid, worker: service.worker.pid }, { postgres: await backendPids(service) });
    failures = 0;
    const t0 = now();
    await pool(s.n, s.inFlight, async (i) => {
      if ((await p.approve(ids[s.warmup + i])) !== 200) failures++;
    });
    const approvalsDone = now();
    await receiver.waitUntil(() => receiver.receipts.size >= s.n - failures, s.timeoutMs, 'every delivery');
    let last = 0;
    for (const r of receiver.receipts.values()) if (r.t > last) last = r.t;
    const memory = mem.stop();
    const apiMemory = apiMem.stop();
    const cpuSeconds = cpu.stop({ postgres: await backendPids(service) });
    const seconds = (last - t0) / 1000;
    return {
      deliveries: receiver.receipts.size,
      failedApprovals: failures,
      duplicates: receiver.duplicates,
      seconds: round(seconds, 2),
      approvalsPerSecond: round(s.n / ((approvalsDone - t0) / 1000), 0),
      deliveriesPerSecond: round(receiver.receipts.size / seconds, 0),
      workerMemory: memory,
      apiMemory,
      cpuSeconds,
      cpuMsPerDelivery: perDelivery(cpuSeconds, receiver.receipts.size),
      sampleBody,
    };
  } finally {
    await http.close().catch(() => undefined);
    await service.stop();
  }
}

async function baseline(s, receiver, body) {
  const base = await startBaseline({ concurrency: s.concurrency, tag: 'tpbase' });
  try {
    const url = `${receiver.url}/hook`;
    receiver.reset();
    await pool(s.warmup, s.inFlight, (i) => base.add(`w-${i}`, url, body));
    await receiver.waitUntil(() => receiver.receipts.size >= s.warmup, s.timeoutMs, 'baseline warm-up');

    receiver.reset();
    const mem = watchMemory(base.pid);
    const cpu = watchCpu({ worker: base.pid });
    const t0 = now();
    await pool(s.n, s.inFlight, (i) => base.add(`b-${i}`, url, body));
    await receiver.waitUntil(() => receiver.receipts.size >= s.n, s.timeoutMs, 'every baseline delivery');
    let last = 0;
    for (const r of receiver.receipts.values()) if (r.t > last) last = r.t;
    const seconds = (last - t0) / 1000;
    const cpuSeconds = cpu.stop();
    return {
      deliveries: receiver.receipts.size,
      seconds: round(seconds, 2),
      deliveriesPerSecond: round(s.n / seconds, 0),
      workerMemory: mem.stop(),
      cpuSeconds,
      cpuMsPerDelivery: perDelivery(cpuSeconds, receiver.receipts.size),
    };
  } finally {
    await base.stop();
  }
}

/** CPU ms per delivery by process group (machine-wide figures are everyone's). */
function perDelivery(cpuSeconds, n) {
  return Object.fromEntries(Object.entries(cpuSeconds).filter(([k]) => k !== 'machineIdle').map(([k, v]) => [k, round((v * 1000) / n, 2)]));
}

const FALLBACK_BODY = JSON.stringify({
  Event: 'AccessRequestApproved',
  Message: { ID: 1, AppID: 1, ByUser: 1, Status: 'approved', ProductIDs: [1], PlanID: 1, CreatedAt: '2026-01-01T00:00:00.000Z', UpdatedAt: '2026-01-01T00:00:00.000Z', UserID: 1, Catalogue: 'Payments', Client: 'Bench app', Plan: 'Gold', Products: ['payments-api'], AuthType: 'authToken' },
  Timestamp: new Date().toISOString(),
});

async function run() {
  const s = settings();
  const receiver = await startReceiver();
  try {
    const o = await ours(s, receiver);
    const b = await baseline(s, receiver, o.sampleBody ?? FALLBACK_BODY);
    delete o.sampleBody;
    const ratio = o.deliveriesPerSecond / b.deliveriesPerSecond;
    const peak = o.workerMemory.peakRssMB;
    const rows = [
      {
        target: 'throughput ≥ 0.5 × baseline',
        N: s.n,
        'ours (deliveries/s)': o.deliveriesPerSecond,
        'baseline (deliveries/s)': b.deliveriesPerSecond,
        ratio: round(ratio, 2),
        result: ratio >= TARGET_RATIO ? 'met' : 'missed',
      },
    ];
    const cpuRow = (who, c) => ({
      '': who,
      'API process': c.api ?? '—',
      'worker process': c.worker,
      'Postgres backends': c.postgres ?? '—',
      'Redis (all clients)': c.redis,
      'bench (load + receiver)': c.bench,
      'machine (everyone)': c.machineBusy,
    });
    const cpuRows = [cpuRow('ours', o.cpuMsPerDelivery), cpuRow('baseline', b.cpuMsPerDelivery)];
    const memRows = [
      {
        target: `worker peak RSS < ${MEMORY_TARGET_MB} MB`,
        'ours peak RSS (MB)': peak,
        'ours VmHWM (MB)': o.workerMemory.vmHwmMB,
        'baseline worker peak RSS (MB)': b.workerMemory.peakRssMB,
        ratio: round(peak / b.workerMemory.peakRssMB, 2),
        result: peak < MEMORY_TARGET_MB ? 'met' : 'missed',
      },
    ];
    return {
      results: [
        { scenario: 'throughput', title: `Dispatch throughput (N=${s.n}, ${s.inFlight} approvals in flight, concurrency ${s.concurrency})`, rows, data: { settings: s, ours: o, baseline: b, ratio, target: TARGET_RATIO, met: ratio >= TARGET_RATIO } },
        { scenario: 'throughput-cpu', title: 'CPU ms per delivery during the timed part (where the time goes)', rows: cpuRows, data: { ours: o.cpuSeconds, baseline: b.cpuSeconds }, noFile: true },
        { scenario: 'memory', title: 'Worker memory during the throughput run', rows: memRows, data: { settings: s, ours: o.workerMemory, api: o.apiMemory, baseline: b.workerMemory, targetMB: MEMORY_TARGET_MB, met: peak < MEMORY_TARGET_MB } },
      ],
    };
  } finally {
    await receiver.close();
  }
}

module.exports = { run, settings };
