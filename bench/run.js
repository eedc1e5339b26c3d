#!/usr/bin/env node
'use strict';
// `npm run bench`: builds, then runs every scenario (or
// BENCH_ONLY=throughput,latency,fanout,isolation,api,memory,scaling),
// prints a table per scenario and writes bench/results/<scenario>-<timestamp>.json. See BENCHMARKS.md.
const infra = require('./lib/infra');
const { stopAll, killAllNow } = require('./lib/procs');
const { printTable, writeResult, machine } = require('./lib/util');

const SCENARIOS = {
  throughput: () => require('./throughput'),
  latency: () => require('./latency'),
  fanout: () => require('./fanout'),
  isolation: () => require('./isolation'),
  api: () => require('./api'),
  scaling: () => require('./scaling'),
};
// memory is measured during the throughput run
const ALIASES = { memory: 'throughput' };

function parseArgs() {
  for (const a of process.argv.slice(2)) {
    const m = /^--([\w-]+)=(.*)$/.exec(a);
    if (!m) {
      if (a === '--help' || a === '-h') {
        process.stdout.write(
          'usage: npm run bench [-- --only=throughput,latency,fanout,isolation,api,memory,scaling --n=20000 --rate=200]\n' +
            'env: BENCH_ONLY, BENCH_N, BENCH_THROUGHPUT_ROUNDS, BENCH_RATE, BENCH_INFLIGHT, BENCH_LATENCY_SECONDS, BENCH_FANOUT_WEBHOOKS,\n' +
            '     BENCH_ISOLATION_RATE, BENCH_ISOLATION_SECONDS, BENCH_API_SECONDS, BENCH_API_CONNECTIONS, BENCH_API_DEFINITIONS,\n' +
            '     BENCH_SCALING_N, BENCH_SCALING_WORKERS (e.g. 1,2,3),\n' +
            '     DATABASE_URL (admin URL to create the bench databases), REDIS_URL, BENCH_VERBOSE=1 (child output)\n',
        );
        process.exit(0);
      }
      throw new Error(`unknown argument ${a}`);
    }
    process.env[`BENCH_${m[1].toUpperCase().replace(/-/g, '_')}`] = m[2];
  }
}

async function main() {
  parseArgs();
  const wanted = (process.env.BENCH_ONLY || Object.keys(SCENARIOS).join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => ALIASES[s] ?? s);
  for (const w of wanted)
    if (!SCENARIOS[w])
      throw new Error(`unknown scenario ${w} (known: ${[...Object.keys(SCENARIOS), 'memory'].join(', ')})`);
  await infra.preflight();
  const m = machine();
  const v = await infra.versions();
  process.stdout.write(
    `bench: commit ${m.commit}${m.dirty ? ' (+ local changes)' : ''}, ${m.machine.nproc} CPUs (${m.machine.cpu}), ${m.machine.memoryMB} MB, ` +
      `node ${m.machine.node}, postgres ${v.postgres}, redis ${v.redis}\n`,
  );
  let failed = 0;
  for (const name of [...new Set(wanted)]) {
    const started = Date.now();
    process.stdout.write(`\n== ${name} ==\n`);
    try {
      const { results } = await SCENARIOS[name]().run();
      for (const r of results) {
        printTable(r.title, r.rows);
        if (r.noFile) continue;
        const file = writeResult(r.scenario, { versions: v, title: r.title, rows: r.rows, ...r.data });
        process.stdout.write(`→ ${file}\n`);
      }
    } catch (err) {
      failed++;
      process.stdout.write(`${name} failed: ${err.stack ?? err.message}\n`);
      writeResult(name, { versions: v, error: String(err.stack ?? err.message) });
    } finally {
      await stopAll();
      process.stdout.write(`(${name}: ${Math.round((Date.now() - started) / 1000)} s)\n`);
    }
  }
  return failed;
}

async function cleanup() {
  await stopAll().catch(() => killAllNow());
  await infra.deleteAllPrefixes();
  await infra.dropAllDatabases();
}

let exiting = false;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (exiting) return;
    exiting = true;
    process.stderr.write(`\n${sig}: stopping children and cleaning up…\n`);
    cleanup().finally(() => process.exit(130));
  });
}

main()
  .then(async (failed) => {
    await cleanup();
    process.exit(failed ? 1 : 0);
  })
  .catch(async (err) => {
    process.stderr.write(`bench failed: ${err.stack ?? err.message}\n`);
    await cleanup();
    process.exit(1);
  });
