'use strict';
// HTTP calls to the service under test (undici Pools, keep-alive), the setup it needs, the checks of its delivery
// log, and the CPU of the processes and Postgres backends of one side of a run.
const { Pool } = require('undici');
const { Client } = require('pg');
const { cpuSeconds, round, sleep, watchCpu } = require('./util');

/**
 * The only statements that read the service's own tables (besides seeding access requests): a change of the
 * service's schema is a change here. The outbox's unrelayed events, and the delivery log as checkDeliveries reads
 * it: every delivery, delivered ones, pending ones, and those whose attempt rows do not add up (not numbered
 * 1..attempt_count, or delivered without a 2xx attempt).
 */
const SERVICE_UNRELAYED = `SELECT count(*)::int AS n FROM outbox_events WHERE relayed_at IS NULL`;
const SERVICE_DELIVERY_LOG = `
  SELECT count(*)::int AS deliveries,
         count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
         count(*) FILTER (WHERE a.n IS NULL OR a.n <> d.attempt_count OR a.last <> d.attempt_count
                                OR (d.status = 'delivered' AND a.ok = 0))::int AS unrecorded
    FROM webhook_deliveries d
    LEFT JOIN (SELECT delivery_id, count(*)::int AS n, max(number) AS last,
                      count(*) FILTER (WHERE error IS NULL AND status_code BETWEEN 200 AND 299)::int AS ok
                 FROM webhook_delivery_attempts GROUP BY delivery_id) a ON a.delivery_id = d.id`;

/** A keep-alive pool to one service process. */
function connect(baseUrl, connections = 64) {
  return new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
}

async function call(pool, method, path, { headers = {}, body } = {}) {
  const res = await pool.request({
    method,
    path,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.statusCode, json, text };
}

async function expectStatus(promise, status, what) {
  const r = await promise;
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  return r.json;
}

/** Portal API helpers bound to one service. */
function portal(service, pool) {
  const auth = { authorization: service.env.PORTAL_API_TOKEN };
  return {
    createWebhook: (body) =>
      expectStatus(
        call(pool, 'POST', '/portal-api/webhooks', {
          headers: auth,
          body: { Events: ['AccessRequestApproved'], ...body },
        }),
        201,
        'create webhook',
      ),
    createApp: (name = 'Bench app') =>
      expectStatus(
        call(pool, 'POST', '/portal-api/apps', {
          headers: auth,
          body: {
            Name: name,
            UserID: 1,
            RedirectURLs: 'https://app.example.com/callback',
            Visibility: 'organisation',
            Description: 'benchmark',
          },
        }),
        200,
        'create app',
      ),
    createAccessRequest: (appId) =>
      expectStatus(
        call(pool, 'POST', '/portal-api/access_requests', {
          headers: auth,
          body: {
            AppID: appId,
            Catalogue: 'Payments',
            Plan: 'Gold',
            Products: ['payments-api'],
            AuthType: 'authToken',
            DCREnabled: false,
            ProvisionImmediately: false,
            User: 'User#1',
          },
        }),
        201,
        'create access request',
      ),
    /** PUT approve; resolves with the status code (200 expected). */
    approve: async (id) => {
      const res = await pool.request({
        method: 'PUT',
        path: `/portal-api/access_requests/${id}/approve`,
        headers: auth,
      });
      await res.body.dump();
      return res.statusCode;
    },
    get: (id) =>
      expectStatus(
        call(pool, 'GET', `/portal-api/access_requests/${id}`, { headers: auth }),
        200,
        'get access request',
      ),
  };
}

/**
 * Setup, not timed: `count` pending access requests of app `appId` written directly into the portal table,
 * with the same values the API would store for {Catalogue: 'Payments', Plan: 'Gold', Products: ['payments-api'],
 * AuthType: 'authToken', User: 'User#1'} (no AccessRequestCreated events: setup must not leave work in the queues).
 * Returns their ids in order.
 */
async function seedAccessRequests(service, appId, count) {
  const c = new Client({ connectionString: service.db.url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `INSERT INTO portal_access_requests (app_id, catalogue, plan, products, auth_type, dcr_enabled, provision_immediately, user_ref, status)
       SELECT $1, 'Payments', 'Gold', ARRAY['payments-api'], 'authToken', false, false, 'User#1', 'pending'
         FROM generate_series(1, $2)
       RETURNING id`,
      [appId, count],
    );
    await c.query('ANALYZE portal_access_requests');
    return rows.map((r) => r.id).sort((a, b) => a - b);
  } finally {
    await c.end();
  }
}

/** Waits until the outbox is drained (every event turned into its deliveries), so setup leaves no work behind. */
async function outboxIdle(service, timeoutMs = 60_000) {
  const c = new Client({ connectionString: service.db.url });
  await c.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await c.query(SERVICE_UNRELAYED);
      if (rows[0].n === 0) return;
      if (Date.now() > deadline) throw new Error(`outbox still has ${rows[0].n} events after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await c.end();
  }
}

/**
 * Warm-up, not measured: `ids` approved with `inFlight` at a time until every delivery is in (`perApproval`
 * receipts each), so JIT, connection pools and prepared statements are hot before the clock starts.
 * Resolves with the number of approvals that went through.
 */
async function warmUp(p, ids, receiver, perApproval = 1, inFlight = 16) {
  receiver.reset();
  let failures = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, ids.length) }, async () => {
      while (next < ids.length) {
        const id = ids[next++];
        if ((await p.approve(id)) !== 200) failures++;
      }
    }),
  );
  await receiver.waitUntil(
    () => receiver.receipts.size >= (ids.length - failures) * perApproval,
    120_000,
    'warm-up deliveries',
  );
  receiver.reset();
  return ids.length - failures;
}

/**
 * The end-of-run check of a delivery log (`sql` reads it: see SERVICE_DELIVERY_LOG): waits (up to `timeoutMs`) until
 * no delivery is pending, the last attempts being recorded after their receipts; then there must be `expected`
 * deliveries, every one delivered, each with its attempt rows. Throws otherwise, failing the scenario.
 */
async function checkDeliveries(dbUrl, sql, expected, what, timeoutMs = 60_000) {
  const c = new Client({ connectionString: dbUrl });
  await c.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    let log;
    for (;;) {
      log = (await c.query(sql)).rows[0];
      if ((log.pending === 0 && log.deliveries >= expected) || Date.now() > deadline) break;
      await sleep(100);
    }
    if (log.deliveries !== expected || log.delivered !== log.deliveries || log.unrecorded !== 0)
      throw new Error(
        `${what}: expected ${expected} deliveries, all delivered with their attempts; the log has ${log.deliveries}, ` +
          `${log.delivered} delivered, ${log.pending} pending, ${log.unrecorded} whose attempts do not add up`,
      );
    return log;
  } finally {
    await c.end();
  }
}

/** checkDeliveries on the service's delivery log. */
function checkServiceDeliveries(service, expected, what) {
  return checkDeliveries(service.db.url, SERVICE_DELIVERY_LOG, expected, what);
}

/**
 * CPU seconds of the Postgres backends serving a database over a run, sampled every 250 ms: pool connections
 * open and close during the run (idle timeout), so a backend's CPU is taken from its last sample before it
 * went; one first seen during the run counts all of its CPU. Local server only (reads /proc). The database's
 * autovacuum workers are among them; their part is told apart (`autovacuum`).
 */
async function watchBackends(dbUrl) {
  const c = new Client({ connectionString: dbUrl });
  await c.connect();
  const base = new Map();
  const last = new Map();
  const autovacuum = new Set();
  let first = true;
  const sample = async () => {
    const { rows } = await c.query(
      `SELECT pid, backend_type FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    for (const { pid, backend_type: type } of rows) {
      if (type === 'autovacuum worker') autovacuum.add(pid);
      const v = cpuSeconds(pid);
      if (!base.has(pid)) base.set(pid, first ? v : 0);
      if (v > 0) last.set(pid, v);
    }
    first = false;
  };
  await sample();
  let running = true;
  const loop = (async () => {
    while (running) {
      await sleep(250);
      await sample().catch(() => undefined);
    }
  })();
  const watcher = {
    /** Of the total, the CPU seconds of the database's autovacuum workers (known once stopped). */
    autovacuum: 0,
    async stop() {
      running = false;
      await loop;
      await sample().catch(() => undefined);
      await c.end();
      let total = 0;
      let vacuum = 0;
      for (const [pid, v] of last) {
        total += v - base.get(pid);
        if (autovacuum.has(pid)) vacuum += v - base.get(pid);
      }
      watcher.autovacuum = round(vacuum, 2);
      return round(total, 2);
    },
  };
  return watcher;
}

/**
 * CPU accounting of one side of a run: the named processes (name → pid, e.g. api and worker), the Postgres
 * backends of its database (`postgres`, sampled through the run), and what watchCpu adds (every redis-server,
 * shared, so attributed by the run's window; this bench process; the whole machine). stop() → CPU seconds by name.
 */
async function watchSide(named, dbUrl) {
  const wal0 = dbUrl ? await walStats(dbUrl) : null;
  const cpu = watchCpu(named);
  const backends = dbUrl ? await watchBackends(dbUrl) : null;
  const side = {
    /** The server's WAL written during the run (every database's: the sides never run at the same time). */
    wal: null,
    async stop() {
      const spent = cpu.stop();
      if (backends) {
        spent.postgres = await backends.stop();
        spent.autovacuum = backends.autovacuum;
      }
      if (wal0) {
        const wal1 = await walStats(dbUrl);
        side.wal = { records: wal1.records - wal0.records, fpi: wal1.fpi - wal0.fpi, bytes: wal1.bytes - wal0.bytes };
      }
      return spent;
    },
  };
  return side;
}

/** The server's WAL counters so far (pg_stat_wal). */
async function walStats(dbUrl) {
  const c = new Client({ connectionString: dbUrl });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT wal_records::float8 AS records, wal_fpi::float8 AS fpi, wal_bytes::float8 AS bytes FROM pg_stat_wal`,
    );
    return rows[0];
  } finally {
    await c.end();
  }
}

module.exports = {
  connect,
  call,
  expectStatus,
  portal,
  seedAccessRequests,
  outboxIdle,
  warmUp,
  checkDeliveries,
  checkServiceDeliveries,
  watchBackends,
  watchSide,
};
