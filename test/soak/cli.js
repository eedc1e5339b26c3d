'use strict';
/** `npm run soak`: the fault soak against its own database and queue prefix. SOAK_SECONDS (default 180). */
const { mkdirSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { runSoak, formatReport } = require('./soak');

async function main() {
  const adminUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const seconds = Number(process.env.SOAK_SECONDS || 180);
  const name = `gwm_soak_${process.pid}`;
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  let report;
  try {
    report = await runSoak({ databaseUrl: u.toString(), redisUrl, queuePrefix: `gwm_soak_${process.pid}`, loadMs: seconds * 1000, drainMs: Math.max(60000, seconds * 500) });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    const { deleteQueueKeys } = require('./soak');
    await deleteQueueKeys(redisUrl, `gwm_soak_${process.pid}`).catch(() => undefined);
  }
  console.log(formatReport(report));
  const dir = path.join(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), JSON.stringify(report, null, 2));
  process.exit(report.lost === 0 && report.pendingPastSchedule === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
