'use strict';
// Fan-out: one event to BENCH_FANOUT_WEBHOOKS (default 1000) subscribed webhooks; time from the approval
// request until every webhook has received it. Several rounds (BENCH_FANOUT_ROUNDS, default 3); the target
// (at most 1.3 × the baseline) is judged on the slowest round of each. Baseline: the same number of jobs added at once
// (addBulk) to a bare BullMQ queue whose worker POSTs them with undici, same concurrency, no Postgres. For context,
// the equal-guarantees baseline (lib/equal.js) does the same rounds with as many webhooks; CPU per delivery by
// process for all three, and each side's delivery log is checked at the end. Every side first runs
// BENCH_FANOUT_WARMUP rounds (default 2) that are not counted, so that no side is judged while its code is still
// being compiled (a fresh process needs more than one round of 1000 deliveries to reach its steady speed).
// Then ours once more with a filter on every webhook (one that accepts the event): at most 1.2 × the time
// without filters. Last, for context, the bare pipeline once more with the least delivery log in Postgres
// ("bare + minimal log": a row per delivery, a record per attempt; lib/baseline.js), which shows how much of the
// 1.3 × recording each delivery in Postgres takes on this machine before any guarantee is added.
const { startService } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const { startBaseline } = require('./lib/baseline');
const { startEqual } = require('./lib/equal');
const { connect, portal, seedAccessRequests, outboxIdle, checkServiceDeliveries, watchSide } = require('./lib/client');
const { now, pool, round, waitFor, perDelivery, addCpu } = require('./lib/util');

const TARGET_RATIO = 1.3;
/** Fan-out with a filter on every webhook: at most this much slower than without filters. */
const FILTER_TARGET_RATIO = 1.2;
// A filter every webhook carries in the filtered variant: it accepts the event, so the work delivered is the
// same and only the filters' evaluation (in the relay statement) is added.
const FILTER = {
  all: [
    { path: 'Event', eq: 'AccessRequestApproved' },
    { path: 'Message.Status', in: ['approved', 'rejected'] },
    { not: { path: 'Message.Catalogue', prefix: 'internal-' } },
    { path: 'Message.ID', gte: 0 },
  ],
};

function settings(env = process.env) {
  return {
    webhooks: Number(env.BENCH_FANOUT_WEBHOOKS || 1000),
    rounds: Number(env.BENCH_FANOUT_ROUNDS || 3),
    warmup: Number(env.BENCH_FANOUT_WARMUP || 2),
    concurrency: Number(env.WEBHOOK_CONCURRENCY || 64),
  };
}

/**
 * The rounds of a side whose approvals go through `p` (`ids[r]` in round r; the first s.warmup rounds warm up and
 * are not counted):
 * time from the approval's request until every webhook has it, and the CPU of the side's processes and database.
 */
async function approvalRounds(s, receiver, p, ids, side, label) {
  const rounds = [];
  const cpu = [];
  for (let r = 0; r < s.warmup + s.rounds; r++) {
    receiver.reset();
    const watch = r >= s.warmup ? await watchSide({ api: side.api, worker: side.worker }, side.dbUrl) : null;
    const t0 = now();
    const status = await p.approve(ids[r]);
    const answered = now();
    if (status !== 200) throw new Error(`${label}: approval answered ${status}`);
    await receiver.waitUntil(() => receiver.receipts.size >= s.webhooks, 60_000, `all ${s.webhooks} ${label} receipts`);
    let first = Infinity;
    let last = 0;
    for (const x of receiver.receipts.values()) {
      if (x.t > last) last = x.t;
      if (x.t < first) first = x.t;
    }
    if (watch) cpu.push(await watch.stop());
    if (r >= s.warmup)
      rounds.push({
        allReceivedMs: round(last - t0, 1),
        approvalMs: round(answered - t0, 1),
        firstReceiptMs: round(first - t0, 1),
        duplicates: receiver.duplicates,
      });
  }
  const cpuSeconds = addCpu(cpu);
  return { rounds, cpuSeconds, cpuMsPerDelivery: perDelivery(cpuSeconds, s.rounds * s.webhooks) };
}

async function ours(s, receiver, filtered = false) {
  const service = await startService({ tag: filtered ? 'fanf' : 'fan' });
  const http = connect(service.api.url, 16);
  try {
    const p = portal(service, http);
    await pool(s.webhooks, 16, (i) =>
      p.createWebhook({ Name: `fan-${i}`, URL: `${receiver.url}/f/${i}`, ...(filtered ? { Filter: FILTER } : {}) }),
    );
    const app = await p.createApp();
    const ids = await seedAccessRequests(service, app.ID, s.warmup + s.rounds);
    await outboxIdle(service);
    const side = { api: service.api.pid, worker: service.worker.pid, dbUrl: service.db.url };
    const out = await approvalRounds(s, receiver, p, ids, side, filtered ? 'ours, filtered' : 'ours');
    out.checked = await checkServiceDeliveries(
      service,
      (s.warmup + s.rounds) * s.webhooks,
      'ours: fan-out delivery log',
    );
    return out;
  } finally {
    await http.close().catch(() => undefined);
    await service.stop();
  }
}

async function equal(s, receiver) {
  const eq = await startEqual({
    webhookUrl: (i) => `${receiver.url}/f/${i}`,
    webhooks: s.webhooks,
    requests: s.warmup + s.rounds,
    concurrency: s.concurrency,
    tag: 'eqfan',
  });
  const http = connect(eq.api.url, 16);
  try {
    const p = portal({ env: { PORTAL_API_TOKEN: eq.token } }, http);
    const side = { api: eq.api.pid, worker: eq.worker.pid, dbUrl: eq.db.url };
    const out = await approvalRounds(s, receiver, p, eq.ids, side, 'equal-guarantees');
    out.checked = await eq.check((s.warmup + s.rounds) * s.webhooks, 'equal-guarantees: fan-out delivery log');
    return out;
  } finally {
    await http.close().catch(() => undefined);
    await eq.stop();
  }
}

/**
 * The bare BullMQ pipeline's rounds: the jobs added at once (addBulk) from the bench process. With `minimalLog`, the
 * same pipeline also writes the least delivery log (lib/baseline.js: a row per delivery, a record per attempt), to
 * show what recording each delivery in Postgres costs on this machine at the least.
 */
async function baseline(s, receiver, body, minimalLog = false) {
  const base = await startBaseline({
    concurrency: s.concurrency,
    tag: minimalLog ? 'fanlog' : 'fanbase',
    minimalLog,
  });
  const label = minimalLog ? 'bare + minimal log' : 'baseline';
  try {
    const rounds = [];
    const cpu = [];
    for (let r = 0; r < s.warmup + s.rounds; r++) {
      receiver.reset();
      const watch = r >= s.warmup ? await watchSide({ worker: base.pid }, base.db?.url) : null;
      const t0 = now();
      await base.addBulk(
        Array.from({ length: s.webhooks }, (_, i) => ({ id: `f${r}-${i}`, url: `${receiver.url}/f/${i}`, body })),
      );
      await receiver.waitUntil(
        () => receiver.receipts.size >= s.webhooks,
        60_000,
        `all ${s.webhooks} ${label} receipts`,
      );
      let last = 0;
      for (const x of receiver.receipts.values()) if (x.t > last) last = x.t;
      if (watch) cpu.push(await watch.stop());
      if (r >= s.warmup) rounds.push({ allReceivedMs: round(last - t0, 1), duplicates: receiver.duplicates });
    }
    const cpuSeconds = addCpu(cpu);
    const out = { rounds, cpuSeconds, cpuMsPerDelivery: perDelivery(cpuSeconds, s.rounds * s.webhooks) };
    if (minimalLog) {
      // a receipt comes before its record: the last records may still be on their way
      const expected = (s.warmup + s.rounds) * s.webhooks;
      await waitFor(async () => (await base.counts()).attempts >= expected, 30_000, "the minimal log's records");
      const counts = await base.counts();
      if (counts.delivered !== expected || counts.attempts !== expected)
        throw new Error(
          `bare + minimal log: ${counts.delivered} delivered, ${counts.attempts} attempts of ${expected}`,
        );
      out.checked = counts;
    }
    return out;
  } finally {
    await base.stop();
  }
}

const BODY = JSON.stringify({
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

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
};

async function run() {
  const s = settings();
  const receiver = await startReceiver();
  try {
    const o = await ours(s, receiver);
    const of = await ours(s, receiver, true);
    const e = await equal(s, receiver);
    const b = await baseline(s, receiver, BODY);
    const m = await baseline(s, receiver, BODY, true);
    const worst = (x) => Math.max(...x.rounds.map((r) => r.allReceivedMs));
    const ratio = worst(o) / worst(b);
    const met = ratio <= TARGET_RATIO;
    const filterRatio = worst(of) / worst(o);
    const rows = [
      {
        target: `all ${s.webhooks} received ≤ ${TARGET_RATIO} × bare BullMQ addBulk`,
        'ours worst (ms)': worst(o),
        'ours median (ms)': median(o.rounds.map((r) => r.allReceivedMs)),
        'equal-guarantees worst (ms)': worst(e),
        'bare BullMQ worst (ms)': worst(b),
        'ours / bare': round(ratio, 2),
        'equal-guarantees / bare': round(worst(e) / worst(b), 2),
        'ours / equal-guarantees': round(worst(o) / worst(e), 2),
        'bare + minimal log worst (ms)': worst(m),
        'bare + minimal log / bare': round(worst(m) / worst(b), 2),
        result: met ? 'met' : 'missed',
      },
      {
        target: `with a filter on each of the ${s.webhooks} webhooks ≤ ${FILTER_TARGET_RATIO} × without`,
        'ours worst (ms)': worst(of),
        'ours median (ms)': median(of.rounds.map((r) => r.allReceivedMs)),
        'ours without filters worst (ms)': worst(o),
        'filtered / unfiltered': round(filterRatio, 2),
        result: filterRatio <= FILTER_TARGET_RATIO ? 'met' : 'missed',
      },
    ];
    const cpuRow = (who, c) => ({
      '': who,
      'API process': c.api ?? '—',
      'worker process': c.worker,
      'Postgres backends': c.postgres ?? '—',
      'Redis (shared, run window)': c.redis,
      'pipeline (sum)': c.pipeline,
      'bench (load + receiver)': c.bench,
    });
    const cpuRows = [
      cpuRow('ours', o.cpuMsPerDelivery),
      cpuRow('ours, a filter on every webhook', of.cpuMsPerDelivery),
      cpuRow('equal-guarantees', e.cpuMsPerDelivery),
      cpuRow('bare BullMQ (producer in the bench)', b.cpuMsPerDelivery),
      cpuRow('bare + minimal log (producer in the bench)', m.cpuMsPerDelivery),
    ];
    return {
      results: [
        {
          scenario: 'fanout',
          title: `Fan-out of one event to ${s.webhooks} webhooks (${s.rounds} rounds)`,
          rows,
          data: {
            settings: s,
            ours: o,
            filtered: of,
            filterTargetRatio: FILTER_TARGET_RATIO,
            filterRatio,
            filterMet: filterRatio <= FILTER_TARGET_RATIO,
            equal: e,
            baseline: b,
            minimalLog: m,
            minimalLogRatio: worst(m) / worst(b),
            targetRatio: TARGET_RATIO,
            ratio,
            equalRatio: worst(e) / worst(b),
            met,
          },
        },
        {
          scenario: 'fanout-cpu',
          title: 'Fan-out: CPU ms per delivery during the counted rounds, by process',
          rows: cpuRows,
          noFile: true,
        },
      ],
    };
  } finally {
    await receiver.close();
  }
}

module.exports = { run, settings };
