import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import IORedis from 'ioredis';
import { takeLeftoverRabbitObjects, takeLeftoverStreams, takeRabbitNames } from '../helpers/brokers';
import {
  dropPrefixOwners,
  ENV_ADMIN_URL,
  ENV_REDIS_URL,
  ENV_RUN_ID,
  ENV_TEMPLATE,
  prefixOwnerOf,
  testQueuePrefix,
  withAdminClient,
} from './test-infra';

const SUMMARY = join(__dirname, '..', '..', 'test-results', 'summary.json');

export default async function globalTeardown(): Promise<void> {
  const adminUrl = process.env[ENV_ADMIN_URL];
  const template = process.env[ENV_TEMPLATE];
  let leftovers: string[];
  let streams: string[];
  let rabbit: string[];
  try {
    leftovers = await takeLeftoverQueueKeys();
    streams = await takeLeftoverStreams();
    rabbit = await takeLeftoverRabbitObjects(takeRabbitNames());
  } finally {
    if (adminUrl && template) {
      await withAdminClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`)).catch(
        () => undefined,
      );
    }
    const embedded = (globalThis as Record<string, unknown>).__embeddedPostgres as
      { stop(): Promise<void> } | undefined;
    await embedded?.stop();
  }
  const runId = process.env[ENV_RUN_ID];
  const owned = (key: string) => {
    const spec = runId ? prefixOwnerOf(runId, key) : undefined;
    return spec ? `${key} (made by ${spec})` : key;
  };
  const shown = leftovers.slice(0, 20).map(owned).join('\n  ');
  if (runId) dropPrefixOwners(runId);
  if (rabbit.length) {
    markSummaryFailed('exchanges or queues left in RabbitMQ');
    throw new Error(`the tests left ${rabbit.length} RabbitMQ object(s) (deleted now): ${rabbit.join(', ')}`);
  }
  if (streams.length) {
    markSummaryFailed('streams left in NATS');
    throw new Error(`the tests left ${streams.length} JetStream stream(s) (deleted now): ${streams.join(', ')}`);
  }
  if (leftovers.length) {
    markSummaryFailed('keys left in Redis');
    throw new Error(
      `the tests left ${leftovers.length} key(s) in Redis (deleted now); every spec must drop its queue prefix:\n  ${shown}`,
    );
  }
}

/** Finds (and deletes) every key still under this run's queue prefixes. */
async function takeLeftoverQueueKeys(): Promise<string[]> {
  const redisUrl = process.env[ENV_REDIS_URL];
  const runId = process.env[ENV_RUN_ID];
  if (!redisUrl || !runId) return [];
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
  const found: string[] = [];
  try {
    await redis.connect();
    // the service's keys start with its prefix as a hash tag (`{prefix}:...`); any others with the bare prefix
    for (const pattern of [`{${testQueuePrefix(runId)}*`, `${testQueuePrefix(runId)}*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length) {
          found.push(...keys);
          await redis.del(...keys);
        }
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return found.sort();
}

/** The summary is written before global teardown runs; a failure found here must show in it too. */
function markSummaryFailed(why: string): void {
  if (!existsSync(SUMMARY)) return;
  const summary = JSON.parse(readFileSync(SUMMARY, 'utf8'));
  summary.failed = (summary.failed ?? 0) + 1;
  summary.success = false;
  summary.teardownFailure = why;
  writeFileSync(SUMMARY, JSON.stringify(summary) + '\n');
}
