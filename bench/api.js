'use strict';
// API: autocannon on GET /portal-api/access_requests/{id} and GET /api/apis (BENCH_API_DEFINITIONS stored
// definitions, default 10 000, filters on) against a bare Fastify server running the same SQL through `pg`
// on the same database with a pool of the same size, and answering the same bodies (checked before the runs).
// Both stay up; BENCH_API_ROUNDS (default 3) rounds alternate the sides (ours, baseline, baseline, ours, ...)
// with the side not measured stopped (SIGSTOP). Headline: requests per second over all runs of a side,
// ours / baseline.
const { join } = require('node:path');
const autocannon = require('autocannon');
const { Client } = require('pg');
const { startService, freePort } = require('./lib/service');
const { connect, call, expectStatus, portal } = require('./lib/client');
const { spawnTracked, stop } = require('./lib/procs');
const { now, pool, round } = require('./lib/util');
// the service's own idle time for pooled connections, for the baseline's pool too
const { POOL_IDLE_MS } = require('../dist/database/data-source');

const TARGET_RATIO = 0.6;
/** GET one access request is a single statement, like its baseline's: it should come close. */
const ACCESS_REQUEST_TARGET_RATIO = 0.8;
const ORG = 'bench-org';
const CATEGORIES = ['payments', 'weather', 'maps', 'identity', 'search'];
// "filters on": organisation (the caller's), category, auth type, base APIs only, name substring, a later page
const LIST_QUERY = '/api/apis?category=payments&auth_type=authToken&base_apis=true&q=bench&p=3';

function settings(env = process.env) {
  return {
    definitions: Number(env.BENCH_API_DEFINITIONS || 10000),
    seconds: Number(env.BENCH_API_SECONDS || 10),
    connections: Number(env.BENCH_API_CONNECTIONS || 32),
    rounds: Number(env.BENCH_API_ROUNDS || 3),
    pool: 20,
  };
}

function oasDoc(i) {
  const keyed = i % 2 === 0;
  return {
    openapi: '3.0.3',
    info: { title: `Bench API ${i}`, version: '1.0.0' },
    paths: { '/items': { get: { operationId: `list${i}`, responses: { 200: { description: 'items' } } } } },
    ...(keyed
      ? {
          components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
          security: [{ key: [] }],
        }
      : {}),
    'x-gateway-api-gateway': {
      info: {
        name: `Bench API ${i}`,
        orgId: ORG,
        categories: [CATEGORIES[i % CATEGORIES.length]],
        state: { active: true },
      },
      upstream: { url: `http://upstream.example/${i}` },
      server: { listenPath: { value: `/bench-${i}/`, strip: true } },
    },
  };
}

/**
 * Stores the definitions: through POST /gateway/apis/oas (BENCH_API_SEED_VIA_API, default the first 500), the rest
 * copied in SQL.
 */
async function seedDefinitions(service, http, s) {
  const viaApi = Math.min(s.definitions, Number(process.env.BENCH_API_SEED_VIA_API || 500));
  const headers = { 'x-gateway-authorization': service.env.GATEWAY_SECRET };
  await pool(viaApi, 8, (i) =>
    expectStatus(call(http, 'POST', '/gateway/apis/oas', { headers, body: oasDoc(i) }), 200, 'create API definition'),
  );
  const rest = s.definitions - viaApi;
  if (rest > 0) {
    // copies of the API-made rows with new ids and names (and the same projection, re-keyed), spread in time
    const c = new Client({ connectionString: service.db.url });
    await c.connect();
    try {
      await c.query(
        `INSERT INTO api_definitions (id, org_id, name, api_type, categories, auth_types, child_ids, is_child, oas, list_entry, created_at, updated_at)
         SELECT n.id, d.org_id, n.name, d.api_type, d.categories, d.auth_types, d.child_ids, d.is_child,
                replace(replace(d.oas::text, d.id, n.id), '"' || d.name || '"', '"' || n.name || '"')::json,
                replace(replace(d.list_entry::text, d.id, n.id), '"' || d.name || '"', '"' || n.name || '"')::json,
                d.created_at + make_interval(secs => g), d.updated_at + make_interval(secs => g)
           FROM generate_series(0, $2::int - 1) AS g
           CROSS JOIN LATERAL (SELECT md5('bench' || g) AS id, 'Bench API ' || ($1::int + g) AS name) n
           JOIN LATERAL (SELECT * FROM api_definitions ORDER BY created_at, id OFFSET (g % $1::int) LIMIT 1) d ON true`,
        [viaApi, rest],
      );
      await c.query('ANALYZE api_definitions');
    } finally {
      await c.end();
    }
  }
  return { viaApi, viaSql: Math.max(0, rest) };
}

function cannon(url, path, headers, s) {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: url + path, headers, connections: s.connections, duration: s.seconds, pipelining: 1 },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
  });
}

/** One side's runs of one endpoint as one: requests over seconds of all its runs; latency of its slowest run. */
function summarize(runs) {
  const sum = (f) => runs.reduce((a, r) => a + f(r), 0);
  const total = sum((r) => r.requests.total);
  const seconds = sum((r) => r.duration);
  const worst = (k) => Math.max(...runs.map((r) => r.latency[k]));
  return {
    requestsPerSecond: round(total / seconds, 0),
    rawRequestsPerSecond: total / seconds,
    perRun: runs.map((r) => round(r.requests.total / r.duration, 0)),
    total,
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    latencyMs: { p50: worst('p50'), p99: worst('p99'), max: worst('max') },
  };
}

/** Stops (SIGSTOP) or resumes (SIGCONT) a process, so that the side not measured takes no CPU meanwhile. */
function hold(pid, held) {
  try {
    process.kill(pid, held ? 'SIGSTOP' : 'SIGCONT');
  } catch {
    /* already gone */
  }
}

async function startBaselineApi(service) {
  const port = await freePort();
  const child = spawnTracked('baseline-api', process.execPath, [join(__dirname, 'lib', 'baseline-api.js')], {
    env: {
      PATH: process.env.PATH,
      BASE_DATABASE_URL: service.db.url,
      BASE_PORT: String(port),
      BASE_PORTAL_TOKEN: service.env.PORTAL_API_TOKEN,
      BASE_ENCRYPTION_KEY: service.env.ENCRYPTION_KEY,
      BASE_POOL: '20',
      BASE_POOL_IDLE_MS: String(POOL_IDLE_MS),
      BASE_PAGE_SIZE: service.env.DASHBOARD_PAGE_SIZE || '10',
    },
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseline API not ready:\n${child.tail.join('\n')}`)), 30_000);
    child.stdout.on('data', (b) => b.toString().includes('READY') && (clearTimeout(timer), resolve()));
    child.once('exit', (code) => reject(new Error(`baseline API exited with ${code}:\n${child.tail.join('\n')}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function run() {
  const s = settings();
  const service = await startService({ tag: 'api', worker: false });
  let base;
  try {
    const http = connect(service.api.url, 8);
    const p = portal(service, http);
    const user = await expectStatus(
      call(http, 'POST', '/admin/users', {
        headers: { 'admin-auth': service.env.ADMIN_SECRET },
        body: { email_address: 'bench@example.com', first_name: 'Bench', last_name: 'User', active: true, org_id: ORG },
      }),
      200,
      'create dashboard user',
    ).catch(async (err) => {
      // some versions answer 201
      if (!/got 201/.test(err.message)) throw err;
      return null;
    });
    const accessKey = user?.Message;
    if (!accessKey) throw new Error('no access key from POST /admin/users');
    const t0 = now();
    const seeded = await seedDefinitions(service, http, s);
    const seedSeconds = round((now() - t0) / 1000, 1);
    const app = await p.createApp();
    const ar = await p.createAccessRequest(app.ID);
    if ((await p.approve(ar.ID)) !== 200) throw new Error('approval failed');
    const arPath = `/portal-api/access_requests/${ar.ID}`;
    const portalHeaders = { authorization: service.env.PORTAL_API_TOKEN };
    const dashHeaders = { authorization: `Bearer ${accessKey}` };
    const check = await call(http, 'GET', LIST_QUERY, { headers: dashHeaders });
    if (check.status !== 200)
      throw new Error(`GET ${LIST_QUERY} answered ${check.status}: ${check.text.slice(0, 200)}`);
    await http.close();

    const endpoints = [
      {
        name: 'GET /portal-api/access_requests/{id}',
        path: arPath,
        headers: portalHeaders,
        target: ACCESS_REQUEST_TARGET_RATIO,
      },
      { name: 'GET /api/apis (filters on)', path: LIST_QUERY, headers: dashHeaders, target: TARGET_RATIO },
    ];
    // both servers stay up and warm; the rounds alternate (ours, baseline, baseline, ours, ...), and the side not
    // measured is stopped meanwhile, so that neither pays for the other's timers
    base = await startBaselineApi(service);
    const sides = {
      ours: { url: service.api.url, pid: service.api.pid },
      baseline: { url: base.url, pid: base.child.pid },
    };
    // the baseline must do the service's whole job: the same status and body, byte for byte, on every route measured
    const compare = { ours: connect(service.api.url, 1), baseline: connect(base.url, 1) };
    try {
      for (const e of endpoints) {
        const [o, b] = await Promise.all(
          ['ours', 'baseline'].map((side) => call(compare[side], 'GET', e.path, { headers: e.headers })),
        );
        if (o.status !== 200 || b.status !== o.status || o.text !== b.text)
          throw new Error(`the baseline answers ${e.name} differently from the service:\n${o.text}\n${b.text}`);
      }
    } finally {
      await Promise.all(Object.values(compare).map((c) => c.close()));
    }
    const runs = Object.fromEntries(endpoints.map((e) => [e.name, { ours: [], baseline: [] }]));
    try {
      for (let r = 0; r < s.rounds; r++) {
        for (const side of r % 2 === 0 ? ['ours', 'baseline'] : ['baseline', 'ours']) {
          const other = side === 'ours' ? 'baseline' : 'ours';
          hold(sides[other].pid, true);
          hold(sides[side].pid, false);
          for (const e of endpoints) {
            if (r === 0) await cannon(sides[side].url, e.path, e.headers, { ...s, seconds: 2 }); // warm-up
            runs[e.name][side].push(await cannon(sides[side].url, e.path, e.headers, s));
          }
        }
      }
    } finally {
      hold(sides.ours.pid, false);
      hold(sides.baseline.pid, false);
    }
    const results = Object.fromEntries(
      endpoints.map((e) => [
        e.name,
        { ours: summarize(runs[e.name].ours), baseline: summarize(runs[e.name].baseline) },
      ]),
    );
    const rows = endpoints.map((e) => {
      const r = results[e.name];
      const ratio = r.ours.rawRequestsPerSecond / r.baseline.rawRequestsPerSecond;
      r.ratio = ratio;
      r.target = e.target;
      r.met = ratio >= e.target && r.ours.non2xx === 0;
      return {
        target: `${e.name} ≥ ${e.target} × baseline`,
        'ours (req/s)': r.ours.requestsPerSecond,
        'baseline (req/s)': r.baseline.requestsPerSecond,
        'ours p99 (ms)': r.ours.latencyMs.p99,
        'baseline p99 (ms)': r.baseline.latencyMs.p99,
        ratio: round(ratio, 2),
        result: r.met ? 'met' : 'missed',
      };
    });
    return {
      results: [
        {
          scenario: 'api',
          title: `API (autocannon, ${s.connections} connections, ${s.rounds} runs of ${s.seconds} s per side and route, alternating; ${s.definitions} definitions, pool ${s.pool})`,
          rows,
          data: {
            settings: s,
            seeded: { ...seeded, seconds: seedSeconds },
            listQuery: LIST_QUERY,
            listMatches: check.json?.pages,
            results,
            target: TARGET_RATIO,
          },
        },
      ],
    };
  } finally {
    if (base) await stop(base.child);
    await service.stop();
  }
}

module.exports = { run, settings };
