import { join } from 'node:path';
import { Client } from 'pg';

/** What global setup found, handed to every test worker through the environment. */
export const ENV_ADMIN_URL = 'GWM_TEST_ADMIN_DATABASE_URL';
export const ENV_TEMPLATE = 'GWM_TEST_TEMPLATE_DATABASE';
export const ENV_REDIS_URL = 'GWM_TEST_REDIS_URL';
export const ENV_RUN_ID = 'GWM_TEST_RUN_ID';

export const TEST_DATA_DIR = join(__dirname, '..', '..', '.data', 'test');

/**
 * Every queue prefix of one test run starts with this, so the global teardown can check that the run
 * left no key behind without confusing it with runs of other checkouts sharing the Redis server.
 */
export function testQueuePrefix(runId: string): string {
  return `gwmt_${runId}_`;
}

export function databaseUrl(adminUrl: string, name: string): string {
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function withAdminClient<T>(adminUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
