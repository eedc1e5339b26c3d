import { AppConfig, ConfigError } from '../config';
import { redisRefusal, resolveRedisUrl } from '../queue/redis-connection';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded-postgres';

export interface Infrastructure {
  config: AppConfig;
  embeddedPostgres?: EmbeddedPostgresHandle;
}

/**
 * Finds Postgres and Redis the way `npm start` and the tests both do:
 * DATABASE_URL or an embedded PostgreSQL under dataDir; a Redis Cluster if one is named, else REDIS_URL, a
 * local Redis, or redis-server from PATH. A Redis that refuses REDIS_URL's password or database number stops
 * start-up (ConfigError); one that cannot be reached does not (readiness says so until it can).
 */
export async function resolveInfrastructure(
  config: AppConfig,
  log: (msg: string) => void,
  opts: { redis: boolean } = { redis: true },
): Promise<Infrastructure> {
  let embeddedPostgres: EmbeddedPostgresHandle | undefined;
  if (!config.database.url) {
    embeddedPostgres = await startEmbeddedPostgres(config.dataDir, log);
    config.database.url = embeddedPostgres.url;
  }
  if (opts.redis && !config.redis.cluster) {
    const configured = config.redis.url;
    config.redis.url = await resolveRedisUrl(configured, config.dataDir, log);
    // the default URL names no database number and no credentials: nothing of it to refuse
    const refusal = configured ? await redisRefusal(configured) : undefined;
    if (refusal) throw new ConfigError(`Invalid configuration:\n  REDIS_URL: the server refuses it: ${refusal}`);
  }
  return { config, embeddedPostgres };
}
