'use strict';
// The equal-guarantees baseline: a hand-written pipeline with the service's guarantees (transactional outbox,
// relay claiming committed rows and inserting their deliveries in one statement, one BullMQ job per delivery,
// signed undici POST, attempts recorded, reconciler), in its own process tree (lib/equal-api.js and
// lib/equal-worker.js) on its own database with the service's schema.
const { randomBytes, randomUUID } = require('node:crypto');
const { join } = require('node:path');
const { Client } = require('pg');
const infra = require('./infra');
const { spawnTracked, stop } = require('./procs');
const { seal } = require('./equal-seal');
const { freePort } = require('./service');
const { runMigrations } = require('../../dist/database/data-source');

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
 * Starts the baseline with one webhook (to `webhookUrl`, subscribed to AccessRequestApproved) and
 * `requests` pending access requests; returns { api: { url, pid }, worker: { pid }, db, token, ids, stop() }.
 */
async function startEqual({ webhookUrl, requests, concurrency = 64, tag = 'eq', worker: withWorker = true }) {
  const db = await infra.createDatabase(tag);
  const prefix = infra.usePrefix(infra.queuePrefix(tag));
  const procs = [];
  const stopAll = async () => {
    await Promise.all(procs.map((p) => stop(p)));
    await infra.dropDatabase(db.name).catch((err) => console.error(`drop ${db.name}: ${err.message}`));
    await infra.deletePrefix(prefix).catch((err) => console.error(`clean ${prefix}: ${err.message}`));
  };
  try {
    await runMigrations(db.url);
    const key = randomBytes(32);
    const token = `portal-${randomBytes(12).toString('hex')}`;
    const c = new Client({ connectionString: db.url });
    await c.connect();
    let ids;
    try {
      await c.query(
        `INSERT INTO webhooks (id, name, url, events, secret_encrypted, created_at) VALUES ($1, 'equal', $2, ARRAY['AccessRequestApproved'], $3, now() - interval '1 minute')`,
        [randomUUID(), webhookUrl, seal(key, `whsec_${randomBytes(24).toString('base64')}`)],
      );
      const app = await c.query(
        `INSERT INTO portal_apps (name, user_id, redirect_urls) VALUES ('Bench app', 1, 'https://app.example.com/callback') RETURNING id`,
      );
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
    };
    const port = await freePort();
    const api = spawnTracked('equal-api', process.execPath, [join(__dirname, 'equal-api.js')], {
      env: { ...env, EQ_PORT: String(port), EQ_PORTAL_TOKEN: token },
    });
    procs.push(api);
    const worker = withWorker
      ? spawnTracked('equal-worker', process.execPath, [join(__dirname, 'equal-worker.js')], { env })
      : null;
    if (worker) procs.push(worker);
    await Promise.all([waitLine(api, 'READY'), worker && waitLine(worker, 'READY')]);
    return {
      api: { url: `http://127.0.0.1:${port}`, pid: api.pid },
      worker: worker && { pid: worker.pid },
      db,
      token,
      ids,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

module.exports = { startEqual };
