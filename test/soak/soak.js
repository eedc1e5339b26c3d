'use strict';
/**
 * Fault soak: keeps approving access requests through the HTTP API while it SIGKILLs and restarts the
 * worker, deletes the queue's Redis keys, restarts the API process, and makes the receiver fail or hang.
 * With several processes (o.apis, o.workers) it also freezes a worker with SIGSTOP for longer than its
 * claims' lease (its deliveries must be taken over, its late answers never recorded twice), cuts the
 * service's Postgres connections (pg_terminate_backend), and restarts one API while the others take the load.
 * Then it lets the system drain and checks that every committed AccessRequestApproved event reached every
 * subscriber at least once and that no delivery is stuck pending past its schedule.
 * Loopback only; bounded in time and count. Used by `npm run soak` (test/soak/cli.js) and by npm test.
 */
const { spawn } = require('node:child_process');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { Client } = require('pg');
const { deleteQueueKeys } = require('../helpers/queue-keys');
const { Pool } = require('undici');

const MAIN = path.join(__dirname, '..', '..', 'dist', 'main.js');
const SUBSCRIBERS = 3;
/** Webhook timeout in the soak (s); a claim's lease is this + 5 s. */
const WEBHOOK_TIMEOUT = 2;
/**
 * A frozen worker stays stopped at least longer than a lease (7 s) and BullMQ's job lock (10 s), and until its
 * claims were taken over.
 */
const FREEZE_MS = 11_000;
/** How long a frozen worker stays stopped at most while it waits for its claims to be taken over. */
const FREEZE_TAKEOVER_MAX_MS = 45_000;
const ALL_FAULTS = ['killWorker', 'wipeQueue', 'restartApi', 'receiverFail', 'receiverHang'];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * The claims a frozen worker holds: right after the freeze the others' requests were answered (or failed), so a
 * lease that is still the same 3 s later, with the receiver answering at once, is one the frozen worker holds.
 */
async function claimsHeldByTheFrozen(db) {
  const leases = async () => {
    const r = await db.query(
      `SELECT id, locked_until::text AS lease FROM webhook_deliveries WHERE status = 'pending' AND locked_until > now()`,
    );
    return new Map(r.rows.map((row) => [row.id, row.lease]));
  };
  const before = await leases();
  await sleep(3000);
  const after = await leases();
  return [...before].filter(([id, lease]) => after.get(id) === lease).map(([id, lease]) => ({ id, lease }));
}

/** Waits (at most maxMs) until every one of these claims was taken over: its lease changed. Returns how many were. */
async function waitForTakeover(db, held, maxMs) {
  const until = Date.now() + maxMs;
  for (;;) {
    const r = await db.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN unnest($1::uuid[], $2::text[]) AS h(id, lease) ON d.id = h.id
        WHERE d.locked_until IS DISTINCT FROM h.lease::timestamptz`,
      [held.map((h) => h.id), held.map((h) => h.lease)],
    );
    const n = r.rows[0].n;
    if (n >= held.length || Date.now() >= until) return n;
    await sleep(250);
  }
}

/** One service process (`node dist/main.js`). */
class Service {
  constructor(name, env) {
    this.name = name;
    this.env = env;
    this.child = null;
    this.log = '';
    /** Attempts this process made under a claim that lapsed and was taken over, which it did not record. */
    this.lateAnswersDropped = 0;
  }
  async start(timeoutMs = 30000) {
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH || '', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // the JSON log (stdout): each late answer the process dropped is counted; warnings and errors are kept
    // (the last 2 000 lines) to explain a delivery that did not arrive
    this.warnings = this.warnings || [];
    child.stdout.on('data', (d) => {
      const text = String(d);
      this.lateAnswersDropped += (text.match(/the claim of this delivery is no longer held/g) || []).length;
      for (const line of text.split('\n')) if (/"level":(40|50|60)/.test(line)) this.warnings.push(line.slice(0, 2000));
      if (this.warnings.length > 2000) this.warnings.splice(0, this.warnings.length - 2000);
    });
    this.child = child;
    this.exited = new Promise((r) => child.once('exit', r));
    let out = '';
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not start:\n${out}`)), timeoutMs);
      child.stderr.on('data', (d) => {
        out += d;
        if (out.length > 20000) out = out.slice(-10000);
        if (/role \w+ listening on/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited (${code}) before listening:\n${out}`));
      });
    });
  }
  get running() {
    const c = this.child;
    return !!c && c.exitCode === null && c.signalCode === null;
  }
  async stop(signal = 'SIGKILL') {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    if (this.frozen) this.thaw();
    c.kill(signal);
    // a bounded wait whose timer is cleared: a pending 15 s timer would keep the jest worker from exiting
    let timer;
    await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, 15000)))]);
    clearTimeout(timer);
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await this.exited;
    }
  }
}

Service.prototype.freeze = function () {
  this.frozen = true;
  this.child.kill('SIGSTOP');
};
Service.prototype.thaw = function () {
  this.frozen = false;
  if (this.running) this.child.kill('SIGCONT');
};

/** The subscriber: answers as the current mode says and keeps the set of webhook-ids it accepted. */
class Receiver {
  constructor() {
    this.mode = 'ok'; // ok | fail | hang
    this.accepted = new Map(); // webhook-id -> times accepted (2xx)
    this.pairs = new Set(); // `${path} ${Message.ID}` accepted
    this.requests = 0;
    this.hanging = new Set();
  }
  async start() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.requests++;
        if (this.mode === 'hang') {
          this.hanging.add(res);
          return;
        }
        if (this.mode === 'fail') {
          res.writeHead(500).end('failing on purpose');
          return;
        }
        const id = req.headers['webhook-id'];
        this.accepted.set(id, (this.accepted.get(id) || 0) + 1);
        try {
          this.pairs.add(`${req.url} ${JSON.parse(body).Message.ID}`);
        } catch {
          /* counted by id anyway */
        }
        res.writeHead(200).end('ok');
      });
    });
    this.server.keepAliveTimeout = 60000;
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = this.server.address().port;
  }
  setMode(mode) {
    this.mode = mode;
    if (mode !== 'hang') {
      for (const res of this.hanging) res.destroy();
      this.hanging.clear();
    }
  }
  async close() {
    this.setMode('ok');
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/**
 * @param {object} o
 * @param {string} o.databaseUrl  an empty, migrated-or-not database of its own
 * @param {string} o.redisUrl
 * @param {string} o.queuePrefix  its own prefix (its keys get deleted)
 * @param {number} [o.loadMs]     how long to keep approving and injecting faults
 * @param {number} [o.faultEveryMs]
 * @param {number} [o.drainMs]    how long to wait for everything to arrive afterwards
 * @param {number} [o.maxApprovals]
 * @param {number} [o.apis]       API processes (default 1)
 * @param {number} [o.workers]    worker processes (default 1)
 * @param {string[]} [o.faults]   fault kinds to inject (default: the single-process ones); also
 *                                'freezeWorker' and 'cutPostgres'
 * @param {boolean} [o.shuffle]   false: the first round of faults in the order given
 * @param {boolean} [o.oneRound]  true: the load ends one fault interval after the first round of faults (every kind
 *                                once), or at loadMs if that comes first
 * @param {(line: string) => void} [o.log]
 */
async function runSoak(o) {
  const log = o.log || ((l) => process.stderr.write(`[soak] ${l}\n`));
  const loadMs = o.loadMs ?? 180000;
  const faultEveryMs = o.faultEveryMs ?? 4000;
  const drainMs = o.drainMs ?? 90000;
  const maxApprovals = o.maxApprovals ?? 100000;
  const token = 'soak-portal-token-0123456789';
  const apiPort = await freePort();
  const env = {
    NODE_ENV: 'test',
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    QUEUE_PREFIX: o.queuePrefix,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'error',
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
    WEBHOOK_RETRY_SCHEDULE: '0,1,1,2,2,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3',
    GATEWAY_SECRET: 'soak-gateway-secret-0123456789',
    ADMIN_SECRET: 'soak-admin-secret-0123456789',
    PORTAL_API_TOKEN: token,
    ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  };
  const apiPorts = [apiPort];
  for (let i = 1; i < (o.apis ?? 1); i++) apiPorts.push(await freePort());
  const apis = apiPorts.map((port, i) => new Service(`api${i}`, { ...env, ROLE: 'api', PORT: String(port) }));
  // workers log warnings: each late answer they drop is counted
  const workers = Array.from(
    { length: o.workers ?? 1 },
    (_, i) => new Service(`worker${i}`, { ...env, ROLE: 'worker', PORT: '0', LOG_LEVEL: 'warn' }),
  );
  const kinds = o.faults ?? ALL_FAULTS;
  const receiver = new Receiver();
  const clients = apiPorts.map((port) => new Pool(`http://127.0.0.1:${port}`, { connections: 8 }));
  const faults = {
    workerKills: 0,
    queueWipes: 0,
    apiRestarts: 0,
    receiverFailing: 0,
    receiverHanging: 0,
    workerFreezes: 0,
    postgresCuts: 0,
  };
  const stats = { approvalsOk: 0, approvalErrors: 0 };
  const apiDown = new Set();
  const pick = (list) => list[Math.floor(Math.random() * list.length)];

  // a call goes to an API process that is up (with one API: waits while it restarts)
  const call = async (method, p, body) => {
    const up = apis.map((_, i) => i).filter((i) => !apiDown.has(i));
    if (up.length === 0) throw new Error('no API process up');
    const client = clients[pick(up)];
    const res = await client.request({
      method,
      path: p,
      headers: { authorization: token, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
      headersTimeout: 10000,
      bodyTimeout: 10000,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : null };
  };

  let db;
  try {
    await receiver.start();
    await apis[0].start(); // migrates first
    await Promise.all([...apis.slice(1), ...workers].map((s) => s.start(60000)));
    // the soak's one connection, opened before the load: its faults and checks then need no new one while the
    // service's pools hold many (a new one may be refused: too many clients)
    db = new Client({ connectionString: o.databaseUrl });
    await db.connect();
    log(`${apis.length} API and ${workers.length} worker process(es) up; faults: ${kinds.join(', ')}`);
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const r = await call('POST', '/portal-api/webhooks', {
        Name: `soak-${i}`,
        URL: `http://127.0.0.1:${receiver.port}/w${i}`,
        Timeout: WEBHOOK_TIMEOUT,
        Events: ['AccessRequestApproved'],
      });
      if (r.status !== 201) throw new Error(`could not create webhook: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const app = await call('POST', '/portal-api/apps', {
      Name: 'soak app',
      UserID: 1,
      RedirectURLs: 'https://soak.example.com/cb',
      Visibility: 'organisation',
      Description: 'soak',
    });
    if (app.status !== 200) throw new Error(`could not create app: ${app.status} ${JSON.stringify(app.body)}`);

    const loadStarted = Date.now();
    const deadline = loadStarted + loadMs;
    let loadOver = false;
    // load: keep creating and approving access requests, retrying while the API restarts
    const loader = async () => {
      while (Date.now() < deadline && stats.approvalsOk < maxApprovals && !loadOver) {
        if (apiDown.size === apis.length) {
          await sleep(100);
          continue;
        }
        try {
          const ar = await call('POST', '/portal-api/access_requests', {
            AppID: app.body.ID,
            Catalogue: 'c',
            Plan: 'p',
            Products: ['x'],
            AuthType: 'authToken',
            DCREnabled: false,
            ProvisionImmediately: false,
            User: 'User#1',
          });
          if (ar.status !== 201) throw new Error(`create: ${ar.status} ${JSON.stringify(ar.body)}`);
          const ap = await call('PUT', `/portal-api/access_requests/${ar.body.ID}/approve`);
          if (ap.status !== 200) throw new Error(`approve: ${ap.status} ${JSON.stringify(ap.body)}`);
          stats.approvalsOk++;
        } catch (err) {
          if (stats.approvalErrors++ < 3 || stats.approvalErrors % 500 === 0)
            log(`approval call failed: ${err.message}`);
          await sleep(100);
        }
      }
    };
    // faults: one at a time, every type at least once, in random order
    const faulter = async () => {
      let bag = [];
      let first = true;
      while (Date.now() + faultEveryMs < deadline) {
        await sleep(faultEveryMs * (0.5 + Math.random()));
        // every kind was injected once, and the load went on for an interval after the last one
        if (bag.length === 0 && !first && o.oneRound) {
          loadOver = true;
          break;
        }
        // the first round in the order given (o.shuffle false) or random; later rounds random
        if (bag.length === 0)
          bag = first && o.shuffle === false ? [...kinds].reverse() : [...kinds].sort(() => Math.random() - 0.5);
        first = false;
        const kind = bag.pop();
        log(`fault: ${kind}`);
        if (kind === 'killWorker') {
          const worker = pick(workers);
          await worker.stop('SIGKILL');
          faults.workerKills++;
          await sleep(300 + Math.random() * 1500);
          await worker.start();
        } else if (kind === 'freezeWorker') {
          // stopped, not dead: its claims lapse and its jobs' locks expire while it holds requests in flight.
          // The receiver holds its answers for a moment first, so every worker has requests in flight.
          const worker = pick(workers);
          receiver.setMode('hang');
          await sleep(1500);
          worker.freeze();
          receiver.setMode('ok'); // the held requests fail; the others retry them, the frozen one learns it late
          const frozenAt = Date.now();
          // it is thawed once the claims it holds were taken over (not after a fixed time: on a slow machine
          // the others' stalled-job check may come late), so its answers, arriving late, must be dropped
          const held = await claimsHeldByTheFrozen(db);
          if (held.length === 0) {
            // it had nothing in flight (it may have just been restarted): this freeze proves nothing, so again
            log('the frozen worker held no claim; thawed, to be frozen again');
            worker.thaw();
            bag.push('freezeWorker');
            continue;
          }
          faults.workerFreezes++;
          const takenOver = await waitForTakeover(db, held, FREEZE_TAKEOVER_MAX_MS);
          while (Date.now() - frozenAt < FREEZE_MS) await sleep(200);
          log(
            `worker frozen ${Date.now() - frozenAt} ms; ${takenOver} of the ${held.length} claims it held taken over`,
          );
          worker.thaw();
        } else if (kind === 'cutPostgres') {
          // every backend of the database but the soak's own
          const r = await db.query(
            `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
          );
          log(`terminated ${r.rows[0].n} backends of the service`);
          faults.postgresCuts++;
        } else if (kind === 'wipeQueue') {
          await deleteQueueKeys(o.redisUrl, o.queuePrefix);
          faults.queueWipes++;
        } else if (kind === 'restartApi') {
          const i = Math.floor(Math.random() * apis.length);
          apiDown.add(i);
          await apis[i].stop(Math.random() < 0.5 ? 'SIGKILL' : 'SIGTERM');
          faults.apiRestarts++;
          await apis[i].start();
          apiDown.delete(i);
        } else if (kind === 'receiverFail' || kind === 'receiverHang') {
          receiver.setMode(kind === 'receiverFail' ? 'fail' : 'hang');
          if (kind === 'receiverFail') faults.receiverFailing++;
          else faults.receiverHanging++;
          await sleep(1500 + Math.random() * 2000);
          receiver.setMode('ok');
        }
      }
    };
    // a fault that fails ends the load too (the loaders would otherwise go on calling the processes stopped below)
    const faulting = faulter().catch((err) => {
      loadOver = true;
      throw err;
    });
    const ran = await Promise.allSettled([loader(), loader(), loader(), faulting]);
    const broken = ran.find((r) => r.status === 'rejected');
    if (broken) throw broken.reason;
    // the load's length: loadMs, or less with o.oneRound
    const loadTookMs = Math.min(loadMs, Date.now() - loadStarted);
    receiver.setMode('ok');
    log(
      `load done: ${stats.approvalsOk} approvals (${stats.approvalErrors} failed calls while faults were on); draining`,
    );

    // what Postgres says was committed: every AccessRequestApproved event
    const events = (
      await db.query(`SELECT payload->>'ID' AS id FROM outbox_events WHERE name = 'AccessRequestApproved'`)
    ).rows.map((r) => r.id);
    const expected = [];
    for (const id of events) for (let i = 0; i < SUBSCRIBERS; i++) expected.push(`/w${i} ${id}`);
    const drainDeadline = Date.now() + drainMs;
    const missing = () => expected.filter((p) => !receiver.pairs.has(p));
    const unsettled = async () =>
      Number((await db.query(`SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'`)).rows[0].n);
    while ((missing().length > 0 || (await unsettled()) > 0) && Date.now() < drainDeadline) await sleep(250);
    // nothing may stay pending past its schedule (allow the reconciler's grace period)
    await sleep(500);
    const stuck = Number(
      (await db.query(`SELECT count(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'`)).rows[0].n,
    );
    const pendingOverdue = Number(
      (
        await db.query(
          `SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at < now() - interval '10 seconds'`,
        )
      ).rows[0].n,
    );
    const failed = Number(
      (await db.query(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'failed'`)).rows[0].n,
    );
    // one record per attempt, whoever answered late
    const doubleRecorded = Number(
      (
        await db.query(
          `SELECT count(*) AS n FROM (SELECT 1 FROM webhook_delivery_attempts GROUP BY delivery_id, number HAVING count(*) > 1) x`,
        )
      ).rows[0].n,
    );
    let received = 0;
    let duplicates = 0;
    for (const n of receiver.accepted.values()) {
      received++;
      duplicates += n - 1;
    }
    const lost = missing().length;
    // what Postgres and Redis hold about deliveries that did not arrive, and what the processes said about them
    const stuckRows = (
      await db.query(
        `SELECT d.id, d.status, d.attempt_count, d.next_attempt_at, d.locked_until, d.event_occurred_at::text AS event_occurred_at, d.created_at, d.updated_at, d.next_trigger,
                (SELECT json_agg(json_build_object('n', a.number, 'at', a.started_at, 'code', a.status_code, 'error', a.error) ORDER BY a.number) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id) AS attempts
           FROM webhook_deliveries d WHERE d.status <> 'delivered' ORDER BY d.created_at LIMIT 10`,
      )
    ).rows;
    const notArrived = [];
    if (stuckRows.length) {
      const { Queue } = require('bullmq');
      const { hashTaggedPrefix, redisTargetFromUrl, createRedisClient } = require('../../dist/queue/redis-connection');
      const target = redisTargetFromUrl(o.redisUrl);
      const queue = new Queue('deliveries', {
        connection: target.cluster
          ? createRedisClient(target)
          : require('../../dist/queue/redis-connection').redisOptionsFromUrl(o.redisUrl),
        prefix: hashTaggedPrefix(o.queuePrefix),
      });
      try {
        for (const r of stuckRows) {
          const jobId = `${r.id}-${r.attempt_count + 1}`;
          const job = await queue.getJob(jobId);
          const said = [...apis, ...workers].flatMap((p) =>
            (p.warnings || []).filter((l) => l.includes(r.id)).map((l) => `${p.name}: ${l}`),
          );
          notArrived.push({
            ...r,
            job: {
              id: jobId,
              state: await queue.getJobState(jobId),
              present: !!job,
              delay: job?.delay,
              timestamp: job?.timestamp,
            },
            said,
          });
        }
        notArrived.push({
          counts: await queue.getJobCounts(),
          reconcilerSaid: workers.flatMap((w) =>
            (w.warnings || []).filter((l) => /reconcil|relay|failed/.test(l)).slice(-20),
          ),
        });
      } finally {
        await queue.close();
      }
    }
    return {
      durationMs: loadTookMs,
      apiProcesses: apis.length,
      workerProcesses: workers.length,
      eventsSent: events.length,
      approvalsAcknowledged: stats.approvalsOk,
      subscribers: SUBSCRIBERS,
      deliveriesExpected: expected.length,
      received,
      duplicates,
      lost,
      notDelivered: stuck,
      pendingPastSchedule: pendingOverdue,
      failed,
      attemptsRecordedTwice: doubleRecorded,
      notArrived,
      lateAnswersDropped: workers.reduce((n, w) => n + w.lateAnswersDropped, 0),
      faults,
    };
  } finally {
    await db?.end().catch(() => undefined);
    for (const client of clients) await client.close().catch(() => undefined);
    for (const worker of workers) await worker.stop('SIGKILL').catch(() => undefined);
    for (const api of apis) await api.stop('SIGTERM').catch(() => undefined);
    await receiver.close().catch(() => undefined);
  }
}

function formatReport(r) {
  const rows = [
    ['processes (API + worker)', `${r.apiProcesses} + ${r.workerProcesses}`],
    ['events sent (committed approvals)', r.eventsSent],
    ['approvals acknowledged by the API', r.approvalsAcknowledged],
    ['subscribers', r.subscribers],
    ['deliveries expected', r.deliveriesExpected],
    ['received (distinct webhook-ids)', r.received],
    ['duplicates', r.duplicates],
    ['lost (must be 0)', r.lost],
    ['not delivered at the end', r.notDelivered],
    ['pending past schedule (must be 0)', r.pendingPastSchedule],
    ['attempts recorded twice (must be 0)', r.attemptsRecordedTwice],
    ['late answers of taken-over claims, dropped', r.lateAnswersDropped],
    ['faults: worker SIGKILLs', r.faults.workerKills],
    ['faults: queue key wipes', r.faults.queueWipes],
    ['faults: API restarts', r.faults.apiRestarts],
    ['faults: receiver failing', r.faults.receiverFailing],
    ['faults: receiver hanging', r.faults.receiverHanging],
    ['faults: worker frozen (SIGSTOP)', r.faults.workerFreezes],
    ['faults: Postgres connections cut', r.faults.postgresCuts],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

module.exports = { runSoak, formatReport, deleteQueueKeys, ALL_FAULTS };
