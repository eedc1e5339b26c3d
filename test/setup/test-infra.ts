import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Where a run notes which spec file made each of its queue prefixes (a file per prefix, holding the spec's path). */
function prefixOwners(runId: string): string {
  return join(TEST_DATA_DIR, `prefixes-${runId}`);
}

/** Notes that `spec` made queue prefix `prefix`, so that a key left under it can be traced to its spec. */
export function notePrefixOwner(runId: string, prefix: string, spec: string): void {
  mkdirSync(prefixOwners(runId), { recursive: true });
  writeFileSync(join(prefixOwners(runId), prefix), spec);
}

/** The spec file that made the queue prefix of `key` (a key of the run), if it was noted. */
export function prefixOwnerOf(runId: string, key: string): string | undefined {
  const prefix = /^\{?([^}:]+)/.exec(key)?.[1];
  if (!prefix) return undefined;
  try {
    return readFileSync(join(prefixOwners(runId), prefix), 'utf8');
  } catch {
    return undefined;
  }
}

/** Forgets the run's notes. */
export function dropPrefixOwners(runId: string): void {
  rmSync(prefixOwners(runId), { recursive: true, force: true });
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
