'use strict';
// The equal-guarantees baseline: a hand-written pipeline with the service's guarantees (transactional outbox,
// relay claiming committed rows and inserting their deliveries in one statement, one BullMQ job per delivery,
// leased claim, signed undici POST, every attempt recorded, retry schedule, reconciler), in its own process tree
// (lib/equal-api.js and lib/equal-worker.js) on its own database with its own lean schema (lib/equal-schema.sql:
// the fewest tables and indexes for those guarantees; the service's schema would hide the schema's cost).
const { randomBytes, randomUUID } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Client } = require('pg');
const infra = require('./infra');
const { nodeArgs, spawnTracked, stop } = require('./procs');
const { seal } = require('./equal-seal');
const { freePort } = require('./service');
const { checkDeliveries } = require('./client');
// the service's own idle time for pooled connections, so that only schema and code differ
const { POOL_IDLE_MS } = require('../../dist/database/data-source');

const SCHEMA = readFileSync(join(__dirname, 'equal-schema.sql'), 'utf8');

/** The baseline's delivery log as checkDeliveries reads it (see client.js: SERVICE_DELIVERY_LOG). */
const DELIVERY_LOG = `
  SELECT count(*)::int AS deliveries,
         count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered,
         count(*) FILTER (WHERE d.status = 'pending')::int AS pending,
         count(*) FILTER (WHERE a.n IS NULL OR a.n <> d.attempt_count OR a.last <> d.attempt_count
                                OR (d.status = 'delivered' AND a.ok = 0))::int AS unrecorded
    FROM webhook_deliveries d
    LEFT JOIN (SELECT event_id, webhook_id, count(*)::int AS n, max(number) AS last,
                      count(*) FILTER (WHERE error IS NULL AND status_code BETWEEN 200 AND 299)::int AS ok
                 FROM webhook_delivery_attempts GROUP BY event_id, webhook_id) a USING (event_id, webhook_id)`;

function waitLine(child, line, timeoutMs = 60_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${child.label} not ready:\n${child.tail.join('\n')}`)), timeoutMs);
    child.stdout.on('data', (b) => {
      if (b.toString().includes(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`${child.label} exited with ${code}:\n${child.tail.join('\n')}`)));
  });
}

/**
 * Starts the baseline with `webhooks` webhooks subscribed to AccessRequestApproved (to `webhookUrl`, or to
 * `webhookUrl(i)` when it is a function) and `requests` pending access requests; returns
 * { api: { url, pid }, worker: { pid }, db, token, ids, check(expected, what), stop() }.
 */
async function startEqual({
  webhookUrl,
  requests,
  webhooks = 1,
  concurrency = 64,
  tag = 'eq',
  worker: withWorker = true,
}) {
  const db = await infra.createDatabase(tag);
  const prefix = infra.usePrefix(infra.queuePrefix(tag));
  const procs = [];
  const stopAll = async () => {
    await Promise.all(procs.map((p) => stop(p)));
    await infra.dropDatabase(db.name).catch((err) => console.error(`drop ${db.name}: ${err.message}`));
    await infra.deletePrefix(prefix).catch((err) => console.error(`clean ${prefix}: ${err.message}`));
  };
  try {
    const key = randomBytes(32);
    const token = `portal-${randomBytes(12).toString('hex')}`;
    const c = new Client({ connectionString: db.url });
    await c.connect();
    let ids;
    try {
      await c.query(SCHEMA);
      const urlOf = typeof webhookUrl === 'function' ? webhookUrl : () => webhookUrl;
      const hooks = Array.from({ length: webhooks }, (_, i) => i);
      for (let i = 0; i < hooks.length; i += 500) {
        const batch = hooks.slice(i, i + 500);
        await c.query(
          `INSERT INTO webhooks (id, url, events, secret_encrypted, created_at)
           SELECT id, url, ARRAY['AccessRequestApproved'], secret, now() - interval '1 minute'
             FROM unnest($1::uuid[], $2::text[], $3::text[]) AS h(id, url, secret)`,
          [
            batch.map(() => randomUUID()),
            batch.map((k) => urlOf(k)),
            batch.map(() => seal(key, `whsec_${randomBytes(24).toString('base64')}`)),
          ],
        );
      }
      const app = await c.query(`INSERT INTO portal_apps (name, user_id) VALUES ('Bench app', 1) RETURNING id`);
      const { rows } = await c.query(
        `INSERT INTO portal_access_requests (app_id, catalogue, plan, products, auth_type, dcr_enabled, provision_immediately, user_ref, status)
         SELECT $1, 'Payments', 'Gold', ARRAY['payments-api'], 'authToken', false, false, 'User#1', 'pending' FROM generate_series(1, $2) RETURNING id`,
        [app.rows[0].id, requests],
      );
      await c.query('ANALYZE');
      ids = rows.map((r) => r.id).sort((a, b) => a - b);
    } finally {
      await c.end();
    }
    const env = {
      PATH: process.env.PATH,
      EQ_DATABASE_URL: db.url,
      EQ_KEY: key.toString('hex'),
      REDIS_URL: infra.REDIS_URL,
      EQ_PREFIX: prefix,
      EQ_CONCURRENCY: String(concurrency),
      EQ_POOL_IDLE_MS: String(POOL_IDLE_MS),
    };
    const port = await freePort();
    const api = spawnTracked('equal-api', process.execPath, [join(__dirname, 'equal-api.js')], {
      env: { ...env, EQ_PORT: String(port), EQ_PORTAL_TOKEN: token },
    });
    procs.push(api);
    const worker = withWorker
      ? spawnTracked(
          'equal-worker',
          process.execPath,
          [...nodeArgs('BENCH_EQ_NODE_ARGS'), join(__dirname, 'equal-worker.js')],
          { env },
        )
      : null;
    if (worker) procs.push(worker);
    await Promise.all([waitLine(api, 'READY'), worker && waitLine(worker, 'READY')]);
    return {
      api: { url: `http://127.0.0.1:${port}`, pid: api.pid },
      worker: worker && { pid: worker.pid },
      db,
      token,
      ids,
      /** Every delivery delivered with its attempts recorded, and `expected` of them; throws otherwise. */
      check: (expected, what) => checkDeliveries(db.url, DELIVERY_LOG, expected, what),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

module.exports = { startEqual };
