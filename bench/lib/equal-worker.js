'use strict';
// The equal-guarantees baseline's worker process, hand-written with the guarantees of the service:
// - relay: LISTEN; the ids a NOTIFY carries are claimed (SKIP LOCKED) and their deliveries inserted in the same
//   statement, then one BullMQ job per delivery (jobId = delivery + attempt); a scan every 2 s as safety net;
// - delivery: claim in Postgres (a lease), Standard Webhooks signature with the decrypted secret, undici POST,
//   attempt record + new status + next attempt under that lease; claims and records of concurrent jobs share
//   statements (natural batching); a failed attempt queues the next one by the schedule, or fails the delivery;
// - reconciler: every 2 s, pending deliveries overdue and unclaimed get their job again.
// The schema is the baseline's own (equal-schema.sql).
// Env: EQ_DATABASE_URL, EQ_REDIS_URL (via infra), EQ_PREFIX, EQ_KEY (hex), EQ_CONCURRENCY (64), EQ_POOL (20).
const { createHmac } = require('node:crypto');
const { Client, Pool } = require('pg');
const { Queue, Worker } = require('bullmq');
const { Agent, request } = require('undici');
const { redisOptions } = require('./infra');
const { open } = require('./equal-seal');

const concurrency = Number(process.env.EQ_CONCURRENCY || 64);
const key = Buffer.from(process.env.EQ_KEY, 'hex');
const db = new Pool({
  connectionString: process.env.EQ_DATABASE_URL,
  max: Number(process.env.EQ_POOL || 20),
  idleTimeoutMillis: Number(process.env.EQ_POOL_IDLE_MS), // the service's POOL_IDLE_MS, from the bench
});
const connection = redisOptions();
const prefix = process.env.EQ_PREFIX;
const queue = new Queue('eq-deliveries', { connection, prefix });
const agent = new Agent({
  connections: Math.max(8, concurrency),
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 60_000,
  pipelining: 1,
});

// A delivery is named by its (event, webhook) pair, the schema's key; a job carries the pair.
const RELAY = (claim) => `
  WITH e AS (UPDATE outbox_events SET relayed_at = now() WHERE id IN (${claim}) RETURNING id, name, occurred_at),
       d AS (INSERT INTO webhook_deliveries (event_id, webhook_id, next_attempt_at)
             SELECT e.id, w.id, now() FROM e JOIN webhooks w ON w.active AND w.events @> ARRAY[e.name] AND w.created_at <= e.occurred_at
             ON CONFLICT (event_id, webhook_id) DO NOTHING RETURNING event_id, webhook_id)
  SELECT (SELECT count(*) FROM e)::int AS events, coalesce((SELECT json_agg(json_build_array(d.event_id, d.webhook_id)) FROM d), '[]'::json) AS deliveries`;
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
// the lease is returned as text (microseconds; a JS Date keeps milliseconds) and must match when recording
const CLAIM = {
  name: 'eq_claim',
  text: `UPDATE webhook_deliveries d SET locked_until = now() + make_interval(secs => w.timeout_seconds + 5)
           FROM unnest($1::uuid[], $2::uuid[]) AS k(event_id, webhook_id), webhooks w, outbox_events e
          WHERE d.event_id = k.event_id AND d.webhook_id = k.webhook_id AND w.id = d.webhook_id AND e.id = d.event_id
            AND d.status = 'pending' AND (d.locked_until IS NULL OR d.locked_until < now())
            AND d.next_attempt_at <= now() + interval '1 second'
      RETURNING d.event_id, d.webhook_id, d.attempt_count, d.locked_until::text AS lease, w.url, w.method, w.timeout_seconds,
                w.secret_encrypted, e.name AS event_name, e.payload, e.occurred_at`,
};
// only under the claim's own lease and at the next attempt number: a late answer after a takeover is dropped
const RECORD = {
  name: 'eq_record',
  text: `WITH v AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::timestamptz[], $5::int[], $6::int[], $7::text[], $8::text[],
                                      $9::text[], $10::timestamptz[], $11::timestamptz[])
                      AS v(event_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, status, next_attempt_at, lease)),
              d AS (UPDATE webhook_deliveries d SET attempt_count = v.number, status = v.status, next_attempt_at = v.next_attempt_at,
                           locked_until = NULL, updated_at = now()
                      FROM v WHERE d.event_id = v.event_id AND d.webhook_id = v.webhook_id AND d.status = 'pending'
                       AND d.locked_until = v.lease AND d.attempt_count = v.number - 1
                    RETURNING d.event_id, d.webhook_id)
         INSERT INTO webhook_delivery_attempts (event_id, webhook_id, number, started_at, status_code, duration_ms, error, response_body, trigger)
         SELECT v.event_id, v.webhook_id, v.number, v.started_at, v.status_code, v.duration_ms, v.error, v.response_body, 'scheduled'
           FROM v JOIN d USING (event_id, webhook_id)
         RETURNING event_id, webhook_id`,
};
const OVERDUE = {
  name: 'eq_overdue',
  text: `SELECT event_id, webhook_id, attempt_count FROM webhook_deliveries
          WHERE status = 'pending' AND next_attempt_at < now() - interval '3 seconds' AND (locked_until IS NULL OR locked_until < now())
          ORDER BY next_attempt_at LIMIT 2000`,
};

/** The service's default schedule: seconds before attempt n + 1 (index n; the first attempt goes at once). */
const SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000];

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

/** Jobs for attempt `attempt` of deliveries given as [eventId, webhookId]; the job id makes a re-add a no-op. */
const jobsOf = (deliveries, attempt = 1, delay = 0) =>
  deliveries.map(([eventId, webhookId]) => ({
    name: 'send',
    data: { eventId, webhookId },
    opts: {
      jobId: `${eventId}.${webhookId}-${attempt}`,
      removeOnComplete: true,
      removeOnFail: true,
      attempts: 1,
      ...(delay ? { delay } : {}),
    },
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
      // should this fail, the deliveries are in Postgres and the reconciler queues them
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
const pairKey = (eventId, webhookId) => `${eventId}.${webhookId}`;
const claim = batcher(async (jobs) => {
  const rows = (await db.query({ ...CLAIM, values: [jobs.map((j) => j.eventId), jobs.map((j) => j.webhookId)] })).rows;
  const byKey = new Map(rows.map((r) => [pairKey(r.event_id, r.webhook_id), r]));
  // one claim per delivery: should two jobs of one delivery share a batch, only the first gets it
  return jobs.map((j) => {
    const k = pairKey(j.eventId, j.webhookId);
    const r = byKey.get(k) ?? null;
    byKey.delete(k);
    return r;
  });
}, concurrency);
const record = batcher(async (as) => {
  const col = (k) => as.map((a) => a[k]);
  const { rows } = await db.query({
    ...RECORD,
    values: [
      col('eventId'),
      col('webhookId'),
      col('number'),
      col('startedAt'),
      col('statusCode'),
      col('durationMs'),
      col('error'),
      col('body'),
      col('status'),
      col('nextAttemptAt'),
      col('lease'),
    ],
  });
  const recorded = new Set(rows.map((r) => pairKey(r.event_id, r.webhook_id)));
  return as.map((a) => recorded.has(pairKey(a.eventId, a.webhookId)));
}, concurrency);

const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

const worker = new Worker(
  'eq-deliveries',
  async (job) => {
    const d = await claim(job.data);
    if (!d) return;
    const msgId = pairKey(d.event_id, d.webhook_id);
    const body = JSON.stringify({
      Event: d.event_name,
      Message: d.payload,
      Timestamp: new Date(d.occurred_at).toISOString(),
    });
    const secret = open(key, d.secret_encrypted);
    const ts = Math.floor(Date.now() / 1000);
    const mac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`${msgId}.${ts}.${body}`)
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
          'webhook-id': msgId,
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
    } catch (err) {
      error = TIMEOUTS.has(err.code) ? 'timeout' : 'connection';
    }
    const number = d.attempt_count + 1;
    // the schedule: attempt n + 1 comes SCHEDULE[n] s (± 20 %) after attempt n failed; past its end the delivery fails
    const retryMs = error && number < SCHEDULE.length ? SCHEDULE[number] * 1000 * (0.8 + 0.4 * Math.random()) : null;
    const recorded = await record({
      eventId: d.event_id,
      webhookId: d.webhook_id,
      number,
      startedAt,
      statusCode,
      durationMs: Math.round(performance.now() - t0),
      error,
      body: text,
      status: error === null ? 'delivered' : retryMs === null ? 'failed' : 'pending',
      nextAttemptAt: retryMs === null ? null : new Date(Date.now() + retryMs),
      lease: d.lease,
    });
    if (recorded && retryMs !== null)
      await queue.addBulk(jobsOf([[d.event_id, d.webhook_id]], number + 1, Math.round(retryMs)));
  },
  { connection, prefix, concurrency, lockDuration: 10_000, stalledInterval: 5_000 },
);
worker.on('error', (err) => process.stderr.write(`worker: ${err.message}\n`));

// --- reconciler: pending work overdue and unclaimed gets its job again (same job id: a no-op if still queued)
setInterval(async () => {
  try {
    const rows = (await db.query(OVERDUE)).rows;
    for (const r of rows) await queue.addBulk(jobsOf([[r.event_id, r.webhook_id]], r.attempt_count + 1));
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
