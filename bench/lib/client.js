'use strict';
// HTTP calls to the service under test (undici Pools, keep-alive) and the setup it needs.
const { Pool } = require('undici');
const { Client } = require('pg');

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
      const { rows } = await c.query(`SELECT count(*)::int AS n FROM outbox_events WHERE relayed_at IS NULL`);
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
}

/** Pids of the Postgres backends connected to the service's database (local server only). */
async function backendPids(service) {
  const c = new Client({ connectionString: service.db.url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows.map((r) => r.pid);
  } finally {
    await c.end();
  }
}

module.exports = { connect, call, expectStatus, portal, seedAccessRequests, outboxIdle, backendPids, warmUp };
