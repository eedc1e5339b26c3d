'use strict';
/**
 * `npm run soak`: the fault soak against its own database and queue prefix. SOAK_SECONDS (default 180);
 * SOAK_APIS (default 2) API and SOAK_WORKERS (default 3) worker processes; every fault kind (with several
 * processes also a worker frozen past its lease and Postgres connections cut). REDIS_URL may name a
 * cluster (redis-cluster://host:port,...).
 */
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { runSoak, formatReport, ALL_FAULTS } = require('./soak');

async function main() {
  const adminUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const seconds = Number(process.env.SOAK_SECONDS || 180);
  const apis = Number(process.env.SOAK_APIS || 2);
  const workers = Number(process.env.SOAK_WORKERS || 3);
  const faults = apis > 1 || workers > 1 ? [...ALL_FAULTS, 'freezeWorker', 'cutPostgres'] : ALL_FAULTS;
  const name = `gwm_soak_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  let report;
  try {
    report = await runSoak({
      databaseUrl: u.toString(),
      redisUrl,
      queuePrefix: `gwm_soak_${process.pid}`,
      loadMs: seconds * 1000,
      drainMs: Math.max(60000, seconds * 500),
      apis,
      workers,
      faults,
    });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    const { deleteQueueKeys } = require('./soak');
    await deleteQueueKeys(redisUrl, `gwm_soak_${process.pid}`).catch(() => undefined);
  }
  console.log(formatReport(report));
  if (report.notArrived.length)
    console.log(
      `not delivered, as Postgres, Redis and the processes saw it:\n${JSON.stringify(report.notArrived, null, 2)}`,
    );
  const dir = path.join(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
    JSON.stringify(report, null, 2),
  );
  process.exit(report.lost === 0 && report.pendingPastSchedule === 0 && report.attemptsRecordedTwice === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
