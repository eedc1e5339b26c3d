import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/app-config';
import { runMigrations } from '../../src/database/data-source';
import { resolveInfrastructure } from '../../src/database/infrastructure';
import {
  databaseUrl,
  ENV_ADMIN_URL,
  ENV_REDIS_URL,
  ENV_RUN_ID,
  ENV_TEMPLATE,
  TEST_DATA_DIR,
  withAdminClient,
} from './test-infra';

/**
 * Finds Postgres and Redis the same way `npm start` does (DATABASE_URL or an embedded PostgreSQL;
 * REDIS_URL, a local Redis or redis-server from PATH), then builds one migrated template database
 * from which every spec file clones its own.
 */
export default async function globalSetup(): Promise<void> {
  const config = loadConfig({
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    DATA_DIR: TEST_DATA_DIR,
    NODE_ENV: 'test',
  });
  const infra = await resolveInfrastructure(config, (m) => process.stderr.write(`[test setup] ${m}\n`));
  (globalThis as Record<string, unknown>).__embeddedPostgres = infra.embeddedPostgres;

  const adminUrl = config.database.url!;
  const template = `gwm_test_template_${process.pid}`;
  await withAdminClient(adminUrl, async (c) => {
    // leftovers of earlier runs that were killed (names carry the run's pid; other live runs are left alone)
    const old = await c.query(`SELECT datname FROM pg_database WHERE datname LIKE 'gwm_test_%'`);
    for (const row of old.rows) {
      const pid = Number(/^gwm_test_(?:template_)?(\d+)/.exec(row.datname)?.[1]);
      if (pid && !processAlive(pid))
        await c.query(`DROP DATABASE IF EXISTS "${row.datname}" WITH (FORCE)`).catch(() => undefined);
    }
    await c.query(`CREATE DATABASE "${template}"`);
  });
  await runMigrations(databaseUrl(adminUrl, template));

  process.env[ENV_ADMIN_URL] = adminUrl;
  process.env[ENV_TEMPLATE] = template;
  process.env[ENV_REDIS_URL] = config.redis.url;
  // unique to this run, not just its pid: pids come round again (32768 on these machines), and a killed run's record
  // of its broker objects would then be taken for this one's
  process.env[ENV_RUN_ID] = `${process.pid}x${randomBytes(3).toString('hex')}`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
