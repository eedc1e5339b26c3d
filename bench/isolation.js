'use strict';
// Isolation: nine fast subscribers and one that takes 10 s to answer. Approvals at a steady rate
// (BENCH_ISOLATION_RATE/s, default 50, for BENCH_ISOLATION_SECONDS, default 10); the fast subscribers'
// p99 latency (approval response → receipt) must stay within 1.5 × that of the same run without the slow one.
const { startService } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const { connect, portal, seedAccessRequests, outboxIdle } = require('./lib/client');
const { now, openLoop, round, summary } = require('./lib/util');

const TARGET_RATIO = 1.5;
const FAST = 9;

function settings(env = process.env) {
  const rate = Number(env.BENCH_ISOLATION_RATE || 50);
  const seconds = Number(env.BENCH_ISOLATION_SECONDS || 10);
  return { rate, seconds, count: Math.round(rate * seconds), warmup: Math.round(rate), fast: FAST, slowMs: Number(env.BENCH_ISOLATION_SLOW_MS || 10_000) };
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
    if (withSlow) await p.createWebhook({ Name: 'slow', URL: `${receiver.url}/slow`, Timeout: 30 });
    const app = await p.createApp();
    const ids = await seedAccessRequests(service, app.ID, s.warmup + s.count);
    await outboxIdle(service);

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
    await receiver.waitUntil(() => {
      fastReceipts = 0;
      for (const r of receiver.receipts.values()) if (isFast(r)) fastReceipts++;
      return fastReceipts >= expectFast;
    }, 120_000, 'every fast delivery');
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

async function run() {
  const s = settings();
  const without = await one(s, false);
  const withSlow = await one(s, true);
  const ratio = withSlow.fast.p99 / without.fast.p99;
  const met = ratio <= TARGET_RATIO;
  const rows = [
    {
      target: `fast p99 with slow ≤ ${TARGET_RATIO} × without`,
      'with slow p99 (ms)': withSlow.fast.p99,
      'without p99 (ms)': without.fast.p99,
      'with slow p50 (ms)': withSlow.fast.p50,
      'without p50 (ms)': without.fast.p50,
      ratio: round(ratio, 2),
      result: met ? 'met' : 'missed',
    },
  ];
  return {
    results: [
      {
        scenario: 'isolation',
        title: `Isolation: ${s.fast} fast subscribers ± one answering after ${s.slowMs / 1000} s (${s.rate} approvals/s for ${s.seconds} s)`,
        rows,
        data: { settings: s, withSlow, without, ratio, target: TARGET_RATIO, met },
      },
    ],
  };
}

module.exports = { run, settings };
