'use strict';
// Dispatch throughput: N approvals through the HTTP API to one webhook whose receiver is a loopback server
// answering 200; deliveries per second from the first approval to the last receipt.
// Reference: the equal-guarantees baseline (lib/equal.js: bare Fastify + pg approval transaction, relay,
// one BullMQ job per delivery, signed undici POST, attempt records, reconciler; its own processes and
// database), under the same load to the same receiver. Beside it: a bare BullMQ queue + worker + undici
// POST of the same body (no Postgres, no guarantees). CPU per delivery for every process of each side.
// Also reports the worker process's peak RSS during the run (the memory scenario).
const { startService } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const { startBaseline } = require('./lib/baseline');
const { startEqual } = require('./lib/equal');
const { connect, portal, seedAccessRequests, outboxIdle, backendPids } = require('./lib/client');
const { now, pool, round, watchMemory, watchCpu } = require('./lib/util');

const TARGET_RATIO = 0.8;
const CPU_TARGET_MS = 4.5;
const MEMORY_TARGET_MB = 250;

function settings(env = process.env) {
  const n = Number(env.BENCH_N || 10000);
  return {
    n,
    inFlight: Number(env.BENCH_INFLIGHT || 64),
    concurrency: Number(env.WEBHOOK_CONCURRENCY || 64),
    warmup: Number(env.BENCH_WARMUP || Math.min(1000, Math.max(100, Math.round(n / 20)))),
    // ours and the equal-guarantees baseline alternate (ours, equal, equal, ours, ...) so that load from
    // elsewhere on the machine falls on both alike; their figures are summed over the rounds
    rounds: Number(env.BENCH_THROUGHPUT_ROUNDS || 2),
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
    const cpu = watchCpu(
      { api: service.api.pid, worker: service.worker.pid },
      { postgres: await backendPids(service) },
    );
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

async function equal(s, receiver) {
  const eq = await startEqual({
    webhookUrl: `${receiver.url}/hook`,
    requests: s.warmup + s.n,
    concurrency: s.concurrency,
  });
  const http = connect(eq.api.url, s.inFlight);
  try {
    const p = portal({ env: { PORTAL_API_TOKEN: eq.token } }, http);
    receiver.reset();
    let failures = 0;
    await pool(s.warmup, s.inFlight, async (i) => {
      if ((await p.approve(eq.ids[i])) !== 200) failures++;
    });
    await receiver.waitUntil(
      () => receiver.receipts.size >= s.warmup - failures,
      s.timeoutMs,
      'equal-guarantees warm-up deliveries',
    );

    receiver.reset();
    const mem = watchMemory(eq.worker.pid);
    const cpu = watchCpu({ api: eq.api.pid, worker: eq.worker.pid }, { postgres: await backendPids(eq) });
    failures = 0;
    const t0 = now();
    await pool(s.n, s.inFlight, async (i) => {
      if ((await p.approve(eq.ids[s.warmup + i])) !== 200) failures++;
    });
    const approvalsDone = now();
    await receiver.waitUntil(
      () => receiver.receipts.size >= s.n - failures,
      s.timeoutMs,
      'every equal-guarantees delivery',
    );
    let last = 0;
    for (const r of receiver.receipts.values()) if (r.t > last) last = r.t;
    const cpuSeconds = cpu.stop({ postgres: await backendPids(eq) });
    const seconds = (last - t0) / 1000;
    return {
      deliveries: receiver.receipts.size,
      failedApprovals: failures,
      duplicates: receiver.duplicates,
      seconds: round(seconds, 2),
      approvalsPerSecond: round(s.n / ((approvalsDone - t0) / 1000), 0),
      deliveriesPerSecond: round(receiver.receipts.size / seconds, 0),
      workerMemory: mem.stop(),
      cpuSeconds,
      cpuMsPerDelivery: perDelivery(cpuSeconds, receiver.receipts.size),
    };
  } finally {
    await http.close().catch(() => undefined);
    await eq.stop();
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

/**
 * CPU ms per delivery by process group, and `pipeline`: the sum of the pipeline's own processes (API, worker,
 * Postgres backends, Redis), without the bench's load generator and receiver. Machine-wide figures are
 * everyone's (other work on the machine included).
 */
function perDelivery(cpuSeconds, n) {
  const out = Object.fromEntries(
    Object.entries(cpuSeconds)
      .filter(([k]) => k !== 'machineIdle')
      .map(([k, v]) => [k, round((v * 1000) / n, 2)]),
  );
  out.pipeline = round(
    (((cpuSeconds.api ?? 0) + (cpuSeconds.worker ?? 0) + (cpuSeconds.postgres ?? 0) + (cpuSeconds.redis ?? 0)) * 1000) /
      n,
    2,
  );
  return out;
}

/** Figures of several runs of one side as one: counts, seconds and CPU summed, memory at its peak. */
function combine(runs) {
  const sum = (k) => runs.reduce((a, r) => a + (r[k] ?? 0), 0);
  const cpuSeconds = {};
  for (const r of runs)
    for (const [k, v] of Object.entries(r.cpuSeconds)) cpuSeconds[k] = round((cpuSeconds[k] ?? 0) + v, 2);
  const deliveries = sum('deliveries');
  const seconds = sum('seconds');
  const peak = (k) => ({
    peakRssMB: Math.max(...runs.map((r) => r[k]?.peakRssMB ?? 0)),
    vmHwmMB: Math.max(...runs.map((r) => r[k]?.vmHwmMB ?? 0)),
  });
  return {
    runs,
    deliveries,
    failedApprovals: sum('failedApprovals'),
    duplicates: sum('duplicates'),
    seconds: round(seconds, 2),
    deliveriesPerSecond: round(deliveries / seconds, 0),
    perRun: runs.map((r) => r.deliveriesPerSecond),
    workerMemory: peak('workerMemory'),
    apiMemory: runs[0].apiMemory ? peak('apiMemory') : undefined,
    cpuSeconds,
    cpuMsPerDelivery: perDelivery(cpuSeconds, deliveries),
  };
}

const FALLBACK_BODY = JSON.stringify({
  Event: 'AccessRequestApproved',
  Message: {
    ID: 1,
    AppID: 1,
    ByUser: 1,
    Status: 'approved',
    ProductIDs: [1],
    PlanID: 1,
    CreatedAt: '2026-01-01T00:00:00.000Z',
    UpdatedAt: '2026-01-01T00:00:00.000Z',
    UserID: 1,
    Catalogue: 'Payments',
    Client: 'Bench app',
    Plan: 'Gold',
    Products: ['payments-api'],
    AuthType: 'authToken',
  },
  Timestamp: new Date().toISOString(),
});

async function run() {
  const s = settings();
  const receiver = await startReceiver();
  try {
    const oursRuns = [];
    const equalRuns = [];
    for (let r = 0; r < s.rounds; r++) {
      const order = r % 2 === 0 ? [ours, equal] : [equal, ours];
      for (const side of order) (side === ours ? oursRuns : equalRuns).push(await side(s, receiver));
    }
    const sampleBody = oursRuns[0].sampleBody;
    oursRuns.forEach((x) => delete x.sampleBody);
    const o = combine(oursRuns);
    const e = combine(equalRuns);
    const b = await baseline(s, receiver, sampleBody ?? FALLBACK_BODY);
    const ratio = o.deliveriesPerSecond / e.deliveriesPerSecond;
    const peak = o.workerMemory.peakRssMB;
    const cpu = o.cpuMsPerDelivery.pipeline;
    const rows = [
      {
        target: `deliveries/s ≥ ${TARGET_RATIO} × equal-guarantees baseline`,
        N: s.n,
        ours: o.deliveriesPerSecond,
        'equal-guarantees': e.deliveriesPerSecond,
        ratio: round(ratio, 2),
        'bare BullMQ': b.deliveriesPerSecond,
        'ours / bare': round(o.deliveriesPerSecond / b.deliveriesPerSecond, 2),
        result: ratio >= TARGET_RATIO ? 'met' : 'missed',
      },
      {
        target: `CPU ms per delivery ≤ ${CPU_TARGET_MS} (API + worker + Postgres + Redis)`,
        N: s.n,
        ours: cpu,
        'equal-guarantees': e.cpuMsPerDelivery.pipeline,
        ratio: round(cpu / e.cpuMsPerDelivery.pipeline, 2),
        'bare BullMQ': b.cpuMsPerDelivery.pipeline,
        'ours / bare': round(cpu / b.cpuMsPerDelivery.pipeline, 2),
        result: cpu <= CPU_TARGET_MS ? 'met' : 'missed',
      },
    ];
    const cpuRow = (who, c) => ({
      '': who,
      'API process': c.api ?? '—',
      'worker process': c.worker,
      'Postgres backends': c.postgres ?? '—',
      'Redis (all clients)': c.redis,
      'pipeline (sum)': c.pipeline,
      'bench (load + receiver)': c.bench,
      'machine (everyone)': c.machineBusy,
    });
    const cpuRows = [
      cpuRow('ours', o.cpuMsPerDelivery),
      cpuRow('equal-guarantees', e.cpuMsPerDelivery),
      cpuRow('bare BullMQ', b.cpuMsPerDelivery),
    ];
    const memRows = [
      {
        target: `worker peak RSS < ${MEMORY_TARGET_MB} MB`,
        'ours peak RSS (MB)': peak,
        'ours VmHWM (MB)': o.workerMemory.vmHwmMB,
        'equal-guarantees worker peak RSS (MB)': e.workerMemory.peakRssMB,
        'bare BullMQ worker peak RSS (MB)': b.workerMemory.peakRssMB,
        result: peak < MEMORY_TARGET_MB ? 'met' : 'missed',
      },
    ];
    return {
      results: [
        {
          scenario: 'throughput',
          title: `Dispatch throughput (N=${s.n} per run, ${s.rounds} runs of each side alternating, ${s.inFlight} approvals in flight, concurrency ${s.concurrency})`,
          rows,
          data: {
            settings: s,
            ours: o,
            equal: e,
            baseline: b,
            ratio,
            target: TARGET_RATIO,
            met: ratio >= TARGET_RATIO,
            cpuTargetMs: CPU_TARGET_MS,
            cpuMet: cpu <= CPU_TARGET_MS,
          },
        },
        {
          scenario: 'throughput-cpu',
          title: 'CPU ms per delivery during the timed part (where the time goes)',
          rows: cpuRows,
          data: { ours: o.cpuSeconds, equal: e.cpuSeconds, baseline: b.cpuSeconds },
          noFile: true,
        },
        {
          scenario: 'memory',
          title: 'Worker memory during the throughput run',
          rows: memRows,
          data: {
            settings: s,
            ours: o.workerMemory,
            api: o.apiMemory,
            equal: e.workerMemory,
            baseline: b.workerMemory,
            targetMB: MEMORY_TARGET_MB,
            met: peak < MEMORY_TARGET_MB,
          },
        },
      ],
    };
  } finally {
    await receiver.close();
  }
}

module.exports = { run, settings };
