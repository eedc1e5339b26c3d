'use strict';
// The equal-guarantees baseline's worker process, hand-written with the guarantees of the service:
// - relay: LISTEN; the ids a NOTIFY carries are claimed (SKIP LOCKED) and their deliveries inserted in the same
//   statement, then one BullMQ job per delivery (jobId = delivery id + attempt); a scan every 2 s as safety net;
// - delivery: claim in Postgres (a lease), Standard Webhooks signature with the decrypted secret, undici POST,
//   attempt record + new status; claims and records of concurrent jobs share statements (natural batching);
// - reconciler: every 2 s, pending deliveries overdue and unclaimed get their job again.
// Env: EQ_DATABASE_URL, EQ_REDIS_URL (via infra), EQ_PREFIX, EQ_KEY (hex), EQ_CONCURRENCY (64), EQ_POOL (20).
const { createHmac } = require('node:crypto');
const { Client, Pool } = require('pg');
const { Queue, Worker } = require('bullmq');
const { Agent, request } = require('undici');
const { redisOptions } = require('./infra');
const { open } = require('./equal-seal');

const concurrency = Number(process.env.EQ_CONCURRENCY || 64);
const key = Buffer.from(process.env.EQ_KEY, 'hex');
const db = new Pool({ connectionString: process.env.EQ_DATABASE_URL, max: Number(process.env.EQ_POOL || 20) });
const connection = redisOptions();
const prefix = process.env.EQ_PREFIX;
const queue = new Queue('eq-deliveries', { connection, prefix });
const agent = new Agent({
  connections: Math.max(8, concurrency),
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 60_000,
  pipelining: 1,
});

const RELAY = (claim) => `
  WITH e AS (UPDATE outbox_events SET relayed_at = now() WHERE id IN (${claim}) RETURNING id, name, occurred_at),
       d AS (INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_name, next_attempt_at, event_occurred_at)
             SELECT gen_random_uuid(), w.id, e.id, e.name, now(), e.occurred_at FROM e JOIN webhooks w ON w.active AND w.events @> ARRAY[e.name] AND w.created_at <= e.occurred_at
             ON CONFLICT (event_id, webhook_id, event_occurred_at) DO NOTHING RETURNING id, webhook_id)
  SELECT (SELECT count(*) FROM e)::int AS events, coalesce((SELECT json_agg(json_build_array(d.id, d.webhook_id)) FROM d), '[]'::json) AS deliveries`;
const RELAY_IDS = {
  name: 'eq_relay_ids',
  text: RELAY(`SELECT id FROM outbox_events WHERE id = ANY($1::uuid[]) AND relayed_at IS NULL FOR UPDATE SKIP LOCKED`),
};
const RELAY_SCAN = {
  name: 'eq_relay_scan',
  text: RELAY(
    `SELECT id FROM outbox_events WHERE relayed_at IS NULL ORDER BY occurred_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
  ),
};
const CLAIM = {
  name: 'eq_claim',
  text: `UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => w.timeout_seconds + 5)
           FROM webhooks w, outbox_events e
          WHERE d.id = ANY($1::uuid[]) AND w.id = d.webhook_id AND e.id = d.event_id AND d.status = 'pending'
            AND (d.locked_until IS NULL OR d.locked_until < now()) AND d.next_attempt_at <= now() + interval '1 second'
      RETURNING d.id, d.attempt_count, w.url, w.method, w.timeout_seconds, w.secret_encrypted, e.name AS event_name, e.payload, e.occurred_at`,
};
const RECORD = {
  name: 'eq_record',
  text: `WITH v AS (SELECT * FROM unnest($1::uuid[], $2::int[], $3::timestamptz[], $4::int[], $5::int[], $6::text[], $7::text[], $8::text[])
                      AS v(delivery_id, number, started_at, status_code, duration_ms, error, response_body, status)),
              a AS (INSERT INTO webhook_delivery_attempts (delivery_id, number, started_at, status_code, duration_ms, error, response_body, trigger, event_occurred_at)
                    SELECT v.delivery_id, v.number, v.started_at, v.status_code, v.duration_ms, v.error, v.response_body, 'scheduled', d.event_occurred_at
                      FROM v JOIN webhook_deliveries d ON d.id = v.delivery_id)
         UPDATE webhook_deliveries d SET attempt_count = v.number, status = v.status, next_attempt_at = CASE WHEN v.status = 'pending' THEN now() + interval '5 seconds' END,
                locked_until = NULL, updated_at = now()
           FROM v WHERE d.id = v.delivery_id`,
};
const OVERDUE = {
  name: 'eq_overdue',
  text: `SELECT id, webhook_id, attempt_count FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at < now() - interval '3 seconds'
           AND (locked_until IS NULL OR locked_until < now()) ORDER BY next_attempt_at LIMIT 2000`,
};

/** Calls made while a batch runs go out together in the next one (at most two batches in flight). */
function batcher(run, max) {
  let waiting = [];
  let running = 0;
  const flush = () => {
    while (running < 2 && waiting.length) {
      const batch = waiting.splice(0, max);
      running++;
      run(batch.map((b) => b.input))
        .then(
          (out) => batch.forEach((b, i) => b.resolve(out[i])),
          (err) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          running--;
          setImmediate(flush);
        });
    }
  };
  return (input) =>
    new Promise((resolve, reject) => {
      waiting.push({ input, resolve, reject });
      if (waiting.length === 1) setImmediate(flush);
    });
}

const jobsOf = (deliveries, attempt = 1) =>
  deliveries.map(([id, webhookId]) => ({
    name: 'send',
    data: { deliveryId: id, webhookId },
    opts: { jobId: `${id}-${attempt}`, removeOnComplete: true, removeOnFail: true, attempts: 1 },
  }));

// --- relay
const announced = new Set();
let scanWanted = true;
let relaying = false;
async function drain() {
  if (relaying) return;
  relaying = true;
  try {
    for (;;) {
      let rows;
      if (announced.size) {
        const ids = [...announced].slice(0, 500);
        ids.forEach((id) => announced.delete(id));
        rows = (await db.query({ ...RELAY_IDS, values: [ids] })).rows;
      } else if (scanWanted) {
        scanWanted = false;
        rows = (await db.query({ ...RELAY_SCAN, values: [500] })).rows;
        if (rows[0].events === 500) scanWanted = true;
      } else break;
      if (rows[0].deliveries.length) await queue.addBulk(jobsOf(rows[0].deliveries));
    }
  } catch (err) {
    process.stderr.write(`relay: ${err.message}\n`);
  } finally {
    relaying = false;
    if (announced.size || scanWanted) setImmediate(drain);
  }
}
const listener = new Client({ connectionString: process.env.EQ_DATABASE_URL });
listener.on('notification', (n) => {
  if (n.payload) n.payload.split(',').forEach((id) => announced.add(id));
  else scanWanted = true;
  drain();
});
setInterval(() => {
  scanWanted = true;
  drain();
}, 2000).unref();

// --- delivery
const claim = batcher(async (ids) => {
  const rows = (await db.query({ ...CLAIM, values: [ids] })).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    const r = byId.get(id) ?? null;
    byId.delete(id);
    return r;
  });
}, concurrency);
const record = batcher(async (as) => {
  const col = (k) => as.map((a) => a[k]);
  await db.query({
    ...RECORD,
    values: [
      col('id'),
      col('number'),
      col('startedAt'),
      col('statusCode'),
      col('durationMs'),
      col('error'),
      col('body'),
      col('status'),
    ],
  });
  return as.map(() => null);
}, concurrency);

const worker = new Worker(
  'eq-deliveries',
  async (job) => {
    const d = await claim(job.data.deliveryId);
    if (!d) return;
    const body = JSON.stringify({
      Event: d.event_name,
      Message: d.payload,
      Timestamp: new Date(d.occurred_at).toISOString(),
    });
    const secret = open(key, d.secret_encrypted);
    const ts = Math.floor(Date.now() / 1000);
    const mac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${d.id}.${ts}.${body}`)
      .digest('base64');
    const startedAt = new Date();
    const t0 = performance.now();
    let statusCode = null;
    let text = '';
    let error = null;
    try {
      const res = await request(d.url, {
        dispatcher: agent,
        method: d.method,
        headers: {
          'content-type': 'application/json',
          'webhook-id': d.id,
          'webhook-timestamp': String(ts),
          'webhook-signature': `v1,${mac}`,
        },
        body,
        headersTimeout: d.timeout_seconds * 1000,
        bodyTimeout: d.timeout_seconds * 1000,
      });
      statusCode = res.statusCode;
      text = (await res.body.text()).slice(0, 4096);
      if (statusCode < 200 || statusCode >= 300) error = 'http_status';
    } catch {
      error = 'connection';
    }
    const delivered = error === null;
    await record({
      id: d.id,
      number: d.attempt_count + 1,
      startedAt,
      statusCode,
      durationMs: Math.round(performance.now() - t0),
      error,
      body: text,
      status: delivered ? 'delivered' : 'pending',
    });
    if (!delivered)
      await queue.addBulk(
        jobsOf([[d.id, job.data.webhookId]], d.attempt_count + 2).map((j) => ({
          ...j,
          opts: { ...j.opts, delay: 5000 },
        })),
      );
  },
  { connection, prefix, concurrency, lockDuration: 10_000, stalledInterval: 5_000 },
);
worker.on('error', (err) => process.stderr.write(`worker: ${err.message}\n`));

// --- reconciler
setInterval(async () => {
  try {
    const rows = (await db.query(OVERDUE)).rows;
    if (rows.length)
      await queue.addBulk(
        jobsOf(
          rows.map((r) => [r.id, r.webhook_id]),
          0,
        ).map((j, i) => ({ ...j, opts: { ...j.opts, jobId: `${rows[i].id}-${rows[i].attempt_count + 1}` } })),
      );
  } catch (err) {
    process.stderr.write(`reconciler: ${err.message}\n`);
  }
}, 2000).unref();

(async () => {
  await listener.connect();
  await listener.query('LISTEN outbox_events');
  await worker.waitUntilReady();
  await queue.waitUntilReady();
  drain();
  process.stdout.write('READY\n');
})().catch((err) => {
  process.stderr.write(`start: ${err.stack}\n`);
  process.exit(1);
});

const shutdown = () => {
  worker
    .close()
    .then(() => Promise.all([queue.close(), listener.end(), agent.close()]))
    .then(() => db.end())
    .finally(() => process.exit(0));
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
