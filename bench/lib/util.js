'use strict';
// Small helpers shared by every scenario: time, percentiles, tables, results files, machine facts.
const { mkdirSync, writeFileSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const os = require('node:os');
const { execFileSync } = require('node:child_process');

const ROOT = join(__dirname, '..', '..');
// BENCH_RESULTS_DIR: write the JSON results elsewhere (e.g. for a before/after comparison)
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR || join(__dirname, '..', 'results');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

/** Nearest-rank percentile (p in 0..100) of a list of numbers; null when empty. */
function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

function summary(values) {
  if (values.length === 0) return { count: 0, p50: null, p95: null, p99: null, max: null, mean: null };
  let sum = 0;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v > max) max = v;
  }
  return {
    count: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max,
    mean: sum / values.length,
  };
}

const round = (v, digits = 1) =>
  v === null || v === undefined || !Number.isFinite(v) ? null : Number(v.toFixed(digits));

/** Runs `fn(i)` for i in [0, count) with at most `limit` calls in flight. */
async function pool(count, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

/** Waits until `check()` is true, polling; throws with `what` after `timeoutMs`. */
async function waitFor(check, timeoutMs, what, every = 20) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(every);
  }
}

function intEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got ${raw})`);
  return n;
}

/** Prints a table of rows (objects with the same keys) with a title. */
function printTable(title, rows) {
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]);
  const cell = (v) => (v === null || v === undefined ? '—' : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals) => '| ' + vals.map((v, i) => v.padEnd(widths[i])).join(' | ') + ' |';
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(line(cols) + '\n');
  process.stdout.write('|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|\n');
  for (const r of rows) process.stdout.write(line(cols.map((c) => cell(r[c]))) + '\n');
}

function stamp() {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

function writeResult(scenario, data) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${scenario}-${stamp()}.json`);
  writeFileSync(file, JSON.stringify({ scenario, ...machine(), ...data }, null, 2) + '\n');
  return file;
}

function tryExec(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
  } catch {
    return null;
  }
}

let machineCache;
/** Facts about the machine and the checkout, written into every result file. */
function machine() {
  if (machineCache) return machineCache;
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  machineCache = {
    machine: {
      nproc: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
      cpu: cpuModel,
      memoryMB: Math.round(os.totalmem() / 1024 / 1024),
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
    },
    commit: tryExec('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']),
    // set when another build than this checkout's dist/ was measured (BENCH_SERVICE_MAIN)
    serviceMain: process.env.BENCH_SERVICE_MAIN || null,
    dirty:
      (tryExec('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no', '--', 'src', 'bench']) ?? '') !==
      '',
    date: new Date().toISOString(),
  };
  return machineCache;
}

/** Reads VmRSS and VmHWM (peak) of a process in MB from /proc; null when unavailable. */
function memoryOf(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => {
      const m = new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s);
      return m ? Number(m[1]) / 1024 : null;
    };
    return { rssMB: kb('VmRSS'), hwmMB: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** Polls a process's memory every `everyMs`; stop() returns the peak RSS seen and the kernel's high-water mark. */
function watchMemory(pid, everyMs = 100) {
  let peak = 0;
  let hwm = null;
  const sample = () => {
    const m = memoryOf(pid);
    if (!m) return;
    if (m.rssMB !== null && m.rssMB > peak) peak = m.rssMB;
    if (m.hwmMB !== null) hwm = m.hwmMB;
  };
  sample();
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    stop() {
      sample();
      clearInterval(timer);
      return { peakRssMB: round(peak, 1), vmHwmMB: round(hwm, 1) };
    },
  };
}

module.exports = {
  ROOT,
  RESULTS_DIR,
  sleep,
  now,
  percentile,
  summary,
  round,
  pool,
  waitFor,
  intEnv,
  printTable,
  writeResult,
  machine,
  memoryOf,
  watchMemory,
  tryExec,
};

/**
 * Open-loop load: calls fn(i) for i in [0, count) at `rate` per second on a fixed schedule, without waiting
 * for earlier calls (so a slow service does not slow the offered load). Resolves when every call has settled.
 * Returns { lateMs }: the worst lag of a start behind its schedule (the load generator's own delay).
 */
function openLoop(rate, count, fn) {
  return new Promise((resolve) => {
    const start = performance.now();
    const pending = new Set();
    let sent = 0;
    let lateMs = 0;
    const tick = () => {
      const elapsed = performance.now() - start;
      const due = Math.min(count, Math.floor((elapsed * rate) / 1000) + 1);
      while (sent < due) {
        const i = sent++;
        lateMs = Math.max(lateMs, elapsed - (i * 1000) / rate);
        const p = Promise.resolve()
          .then(() => fn(i))
          .catch(() => undefined)
          .finally(() => pending.delete(p));
        pending.add(p);
      }
      if (sent >= count) {
        Promise.all(pending).then(() => resolve({ lateMs }));
        return;
      }
      setTimeout(tick, Math.max(0, (sent * 1000) / rate - (performance.now() - start)));
    };
    tick();
  });
}

module.exports.openLoop = openLoop;

/** CPU seconds (user + system) a process has used so far; 0 when it cannot be read. */
function cpuSeconds(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** Pids of local processes whose command name is `comm` (e.g. postgres, redis-server); [] where /proc is not there. */
function pidsByName(comm) {
  const { readdirSync } = require('node:fs');
  const out = [];
  try {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === comm) out.push(Number(d));
      } catch {
        /* gone */
      }
    }
  } catch {
    /* no /proc */
  }
  return out;
}

/**
 * CPU accounting for a run: CPU seconds used by the given processes (`named`: name → pid), by groups of
 * processes (`groups`: name → pids, e.g. the Postgres backends serving the bench database), by every local
 * redis-server (shared with whatever else uses it), by this bench process, and by the whole machine
 * (/proc/stat, everyone's work). stop() returns the differences. Linux only; zeros elsewhere.
 */
function watchCpu(named, groups = {}) {
  const machineBusy = () => {
    try {
      const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
      return { busy: (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] || 0)) / 100, idle: (f[3] + f[4]) / 100 };
    } catch {
      return { busy: 0, idle: 0 };
    }
  };
  const sample = () => {
    const o = {};
    for (const [k, pid] of Object.entries(named)) o[k] = cpuSeconds(pid);
    for (const [k, pids] of Object.entries(groups)) o[k] = pids.reduce((a, p) => a + cpuSeconds(p), 0);
    o.redis = pidsByName('redis-server').reduce((a, p) => a + cpuSeconds(p), 0);
    o.bench = cpuSeconds(process.pid);
    const m = machineBusy();
    o.machineBusy = m.busy;
    o.machineIdle = m.idle;
    return o;
  };
  const first = sample();
  const startCpu = new Map(
    Object.values(groups)
      .flat()
      .map((p) => [p, cpuSeconds(p)]),
  );
  return {
    /**
     * laterGroups: the groups' pids at the end (e.g. pool connections opened during the run); a pid not
     * seen at the start counts all of its CPU time.
     */
    stop(laterGroups = {}) {
      const last = sample();
      for (const [k, pids] of Object.entries(laterGroups)) {
        last[k] = 0;
        first[k] = 0;
        for (const p of new Set([...(groups[k] ?? []), ...pids])) last[k] += cpuSeconds(p) - (startCpu.get(p) ?? 0);
      }
      return Object.fromEntries(Object.keys(last).map((k) => [k, round(last[k] - first[k], 2)]));
    },
  };
}

module.exports.cpuSeconds = cpuSeconds;
module.exports.watchCpu = watchCpu;

/**
 * CPU ms per delivery by process group (from CPU seconds, e.g. watchSide's), and `pipeline`: the sum of the
 * pipeline's own processes (API, worker, Postgres backends, Redis), without the bench's load generator and
 * receiver. machineBusy is everyone's (other work on the machine included).
 */
function perDelivery(cpuSecs, n) {
  const out = Object.fromEntries(
    Object.entries(cpuSecs)
      .filter(([k]) => k !== 'machineIdle')
      .map(([k, v]) => [k, round((v * 1000) / n, 2)]),
  );
  out.pipeline = round(
    (((cpuSecs.api ?? 0) + (cpuSecs.worker ?? 0) + (cpuSecs.postgres ?? 0) + (cpuSecs.redis ?? 0)) * 1000) / n,
    2,
  );
  return out;
}

/** CPU seconds of several runs added up, name by name. */
function addCpu(runs) {
  const sum = {};
  for (const r of runs) for (const [k, v] of Object.entries(r)) sum[k] = round((sum[k] ?? 0) + v, 2);
  return sum;
}

module.exports.perDelivery = perDelivery;
module.exports.addCpu = addCpu;

/** WAL per delivery of both sides (records, full-page images, bytes) and their ratio. */
function walTable(o, e) {
  const row = (who, w) => ({ run: who, 'WAL records': w.records, 'full-page images': w.fpi, 'WAL bytes': w.bytes });
  const r = (k) => (o[k] && e[k] ? round(o[k] / e[k], 2) : '—');
  return [
    row('ours', o),
    row('equal-guarantees', e),
    { run: 'ours / equal', 'WAL records': r('records'), 'full-page images': r('fpi'), 'WAL bytes': r('bytes') },
  ];
}

module.exports.walTable = walTable;

/** The ratios of each pair of throughput runs (ours' run i against the equal-guarantees' run i), as one line. */
function pairRatios(o, e) {
  const pairs = (ox, ex) => ox.map((x, i) => round(x / ex[i], 2)).join(', ');
  return (
    `throughput ${pairs(o.perRun, e.perRun)}; Postgres CPU ${pairs(o.postgresPerRun, e.postgresPerRun)}; ` +
    `total CPU ${pairs(o.pipelinePerRun, e.pipelinePerRun)}`
  );
}

module.exports.pairRatios = pairRatios;
