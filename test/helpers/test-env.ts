import { randomBytes } from 'node:crypto';
import { deleteQueueKeys } from './queue-keys';
import {
  databaseUrl,
  ENV_ADMIN_URL,
  ENV_REDIS_URL,
  ENV_RUN_ID,
  ENV_TEMPLATE,
  notePrefixOwner,
  testQueuePrefix,
  withAdminClient,
} from '../setup/test-infra';

export const TEST_SECRETS = {
  GATEWAY_SECRET: 'test-gateway-secret-0123456789',
  ADMIN_SECRET: 'test-admin-secret-0123456789',
  PORTAL_API_TOKEN: 'test-portal-token-0123456789',
  ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
};

/** One spec file's private world: its own database (cloned from the migrated template) and queue prefix. */
export interface TestEnv {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  /** The environment to give the service (the variables the service documents, by their names). */
  vars: Record<string, string>;
  drop(): Promise<void>;
}

export async function createTestEnv(extra: Record<string, string> = {}): Promise<TestEnv> {
  const adminUrl = required(ENV_ADMIN_URL);
  const template = required(ENV_TEMPLATE);
  const redisUrl = required(ENV_REDIS_URL);
  const suffix = randomBytes(5).toString('hex');
  const name = `gwm_test_${required(ENV_RUN_ID)}_${suffix}`;
  await withAdminClient(adminUrl, (c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  const queuePrefix = `${testQueuePrefix(required(ENV_RUN_ID))}${suffix}`;
  // so that a key left under this prefix names its spec in the teardown's report
  if (typeof expect !== 'undefined' && expect.getState().testPath)
    notePrefixOwner(required(ENV_RUN_ID), queuePrefix, expect.getState().testPath!);
  const dbUrl = databaseUrl(adminUrl, name);
  return {
    databaseUrl: dbUrl,
    redisUrl,
    queuePrefix,
    vars: {
      NODE_ENV: 'test',
      DATABASE_URL: dbUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: queuePrefix,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128',
      ...TEST_SECRETS,
      ...extra,
    },
    drop: async () => {
      await deleteQueueKeys(redisUrl, queuePrefix);
      await withAdminClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

export { deleteQueueKeys };

function required(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through jest (global setup prepares Postgres and Redis)`);
  return v;
}
