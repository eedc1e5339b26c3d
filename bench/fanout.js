'use strict';
// Fan-out: one event to BENCH_FANOUT_WEBHOOKS (default 1000) subscribed webhooks; time from the approval
// request until every webhook has received it. Several rounds (BENCH_FANOUT_ROUNDS, default 3); the target
// (at most 1.3 × the baseline) is judged on the slowest round of each. Baseline: the same number of jobs added at once
// (addBulk) to a bare BullMQ queue
// whose worker POSTs them with undici, same concurrency, no Postgres.
const { startService } = require('./lib/service');
const { startReceiver } = require('./lib/receiver');
const { startBaseline } = require('./lib/baseline');
const { connect, portal, seedAccessRequests, outboxIdle } = require('./lib/client');
const { now, pool, round } = require('./lib/util');

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
    concurrency: Number(env.WEBHOOK_CONCURRENCY || 64),
  };
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
    const ids = await seedAccessRequests(service, app.ID, s.rounds + 1);
    await outboxIdle(service);
    const rounds = [];
    // one warm-up round, not counted
    for (let r = 0; r <= s.rounds; r++) {
      receiver.reset();
      const t0 = now();
      const status = await p.approve(ids[r]);
      const answered = now();
      if (status !== 200) throw new Error(`approval answered ${status}`);
      await receiver.waitUntil(() => receiver.receipts.size >= s.webhooks, 60_000, `all ${s.webhooks} receipts`);
      let first = Infinity;
      let last = 0;
      for (const x of receiver.receipts.values()) {
        if (x.t > last) last = x.t;
        if (x.t < first) first = x.t;
      }
      if (r > 0)
        rounds.push({
          allReceivedMs: round(last - t0, 1),
          approvalMs: round(answered - t0, 1),
          firstReceiptMs: round(first - t0, 1),
          duplicates: receiver.duplicates,
        });
    }
    return { rounds };
  } finally {
    await http.close().catch(() => undefined);
    await service.stop();
  }
}

async function baseline(s, receiver, body) {
  const base = await startBaseline({ concurrency: s.concurrency, tag: 'fanbase' });
  try {
    const rounds = [];
    for (let r = 0; r <= s.rounds; r++) {
      receiver.reset();
      const t0 = now();
      await base.addBulk(
        Array.from({ length: s.webhooks }, (_, i) => ({ id: `f${r}-${i}`, url: `${receiver.url}/f/${i}`, body })),
      );
      await receiver.waitUntil(
        () => receiver.receipts.size >= s.webhooks,
        60_000,
        `all ${s.webhooks} baseline receipts`,
      );
      let last = 0;
      for (const x of receiver.receipts.values()) if (x.t > last) last = x.t;
      if (r > 0) rounds.push({ allReceivedMs: round(last - t0, 1) });
    }
    return { rounds };
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
    const b = await baseline(s, receiver, BODY);
    const worst = Math.max(...o.rounds.map((r) => r.allReceivedMs));
    const fWorst = Math.max(...of.rounds.map((r) => r.allReceivedMs));
    const bWorst = Math.max(...b.rounds.map((r) => r.allReceivedMs));
    const filterRatio = fWorst / worst;
    const rows = [
      {
        target: `all ${s.webhooks} received ≤ ${TARGET_RATIO} × baseline`,
        'ours worst (ms)': worst,
        'ours median (ms)': median(o.rounds.map((r) => r.allReceivedMs)),
        'baseline worst (ms)': bWorst,
        ratio: round(worst / bWorst, 2),
        result: worst <= TARGET_RATIO * bWorst ? 'met' : 'missed',
      },
      {
        target: `with a filter on each of the ${s.webhooks} webhooks ≤ ${FILTER_TARGET_RATIO} × without`,
        'ours worst (ms)': fWorst,
        'ours median (ms)': median(of.rounds.map((r) => r.allReceivedMs)),
        'baseline worst (ms)': worst,
        ratio: round(filterRatio, 2),
        result: filterRatio <= FILTER_TARGET_RATIO ? 'met' : 'missed',
      },
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
            baseline: b,
            targetRatio: TARGET_RATIO,
            ratio: worst / bWorst,
            met: worst <= TARGET_RATIO * bWorst,
          },
        },
      ],
    };
  } finally {
    await receiver.close();
  }
}

module.exports = { run, settings };
