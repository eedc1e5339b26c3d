'use strict';
// Isolation: nine fast subscribers and one that takes 10 s to answer. Approvals at a steady rate
// (BENCH_ISOLATION_RATE/s, default 25, for BENCH_ISOLATION_SECONDS, default 15); the fast subscribers'
// p99 latency (approval response → receipt) must stay within 1.5 × that of the same run without the slow one.
const { startService } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const { connect, portal, seedAccessRequests, outboxIdle, warmUp } = require('./lib/client');
const { now, openLoop, round, summary } = require('./lib/util');

const TARGET_RATIO = 1.5;
const FAST = 9;

/** Approvals made (closed loop) before the measured open-loop run, to warm the service up. */
const WARMUP_APPROVALS = Number(process.env.BENCH_WARMUP_APPROVALS || 300);

function settings(env = process.env) {
  const rate = Number(env.BENCH_ISOLATION_RATE || 25);
  const seconds = Number(env.BENCH_ISOLATION_SECONDS || 15);
  return {
    rate,
    seconds,
    count: Math.round(rate * seconds),
    warmup: Math.round(rate * Number(env.BENCH_ISOLATION_WARMUP_SECONDS || 1)),
    fast: FAST,
    // three pairs: the median of three p99s per side leaves out a single run caught in a stall of the machine
    // (with two, the median is their mean, and one stall decided the verdict)
    pairs: Number(env.BENCH_ISOLATION_PAIRS || 3),
    slowMs: Number(env.BENCH_ISOLATION_SLOW_MS || 10_000),
  };
}

const arId = (body) => {
  try {
    return JSON.parse(body).Message.ID;
  } catch {
    return null;
  }
};

async function one(s, withSlow) {
  const receiver = await startReceiver({ slow: { '/slow': s.slowMs } });
  const service = await startService({ tag: withSlow ? 'isoslow' : 'iso' });
  const http = connect(service.api.url, 64);
  try {
    const p = portal(service, http);
    for (let k = 0; k < s.fast; k++) await p.createWebhook({ Name: `fast-${k}`, URL: `${receiver.url}/fast/${k}` });
    const app = await p.createApp();
    const all = await seedAccessRequests(service, app.ID, WARMUP_APPROVALS + s.warmup + s.count);
    await outboxIdle(service);
    await warmUp(p, all.slice(0, WARMUP_APPROVALS), receiver, s.fast);
    // the slow subscriber joins after the warm-up, so only the measured events reach it
    if (withSlow) await p.createWebhook({ Name: 'slow', URL: `${receiver.url}/slow`, Timeout: 30 });
    const ids = all.slice(WARMUP_APPROVALS);

    const answeredAt = new Map();
    const measured = new Set(ids.slice(s.warmup));
    let failures = 0;
    const isFast = (r) => r.path.startsWith('/fast/');
    let fastReceipts = 0;
    receiver.reset();
    const t0 = now();
    const load = await openLoop(s.rate, ids.length, async (i) => {
      const status = await p.approve(ids[i]);
      answeredAt.set(ids[i], now());
      if (status !== 200) failures++;
    });
    const expectFast = (ids.length - failures) * s.fast;
    await receiver.waitUntil(
      () => {
        fastReceipts = 0;
        for (const r of receiver.receipts.values()) if (isFast(r)) fastReceipts++;
        return fastReceipts >= expectFast;
      },
      120_000,
      'every fast delivery',
    );
    const lat = [];
    let slowReceipts = 0;
    for (const r of receiver.receipts.values()) {
      if (!isFast(r)) {
        slowReceipts++;
        continue;
      }
      const id = arId(r.body);
      if (!measured.has(id) || !answeredAt.has(id)) continue;
      lat.push(Math.max(0, r.t - answeredAt.get(id)));
    }
    const sum = summary(lat);
    return {
      withSlow,
      approvals: ids.length,
      failedApprovals: failures,
      generatorMaxLagMs: round(load.lateMs, 1),
      wallSeconds: round((now() - t0) / 1000, 1),
      slowReceiptsSoFar: slowReceipts,
      fast: Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, k === 'count' ? v : round(v, 1)])),
    };
  } finally {
    await http.close().catch(() => undefined);
    await service.stop();
    await receiver.close();
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] + s[Math.ceil((s.length - 1) / 2)]) / 2 : null;
};

async function run() {
  const s = settings();
  // runs alternate (without, with, without, with, ...) so drift on a shared machine hits both alike;
  // the headline compares the medians of their p99s
  const runs = { without: [], withSlow: [] };
  for (let i = 0; i < s.pairs; i++) {
    runs.without.push(await one(s, false));
    runs.withSlow.push(await one(s, true));
  }
  const p99With = round(median(runs.withSlow.map((r) => r.fast.p99)), 1);
  const p99Without = round(median(runs.without.map((r) => r.fast.p99)), 1);
  const ratio = p99With / p99Without;
  const met = ratio <= TARGET_RATIO;
  const rows = [
    {
      target: `fast p99 with slow ≤ ${TARGET_RATIO} × without`,
      'with slow p99 (ms)': p99With,
      'without p99 (ms)': p99Without,
      'with slow p50 (ms)': round(median(runs.withSlow.map((r) => r.fast.p50)), 1),
      'without p50 (ms)': round(median(runs.without.map((r) => r.fast.p50)), 1),
      'runs (p99s with / without)': `${runs.withSlow.map((r) => r.fast.p99).join(', ')} / ${runs.without.map((r) => r.fast.p99).join(', ')}`,
      ratio: round(ratio, 2),
      result: met ? 'met' : 'missed',
    },
  ];
  return {
    results: [
      {
        scenario: 'isolation',
        title: `Isolation: ${s.fast} fast subscribers ± one answering after ${s.slowMs / 1000} s (${s.rate} approvals/s for ${s.seconds} s, ${s.pairs} alternating pairs, medians)`,
        rows,
        data: { settings: s, runs, p99With, p99Without, ratio, target: TARGET_RATIO, met },
      },
    ],
  };
}

module.exports = { run, settings };
