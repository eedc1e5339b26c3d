import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import IORedis, { RedisOptions } from 'ioredis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Turns a redis:// or rediss:// URL into ioredis options suitable for BullMQ. */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname && u.pathname !== '/' ? Number(u.pathname.slice(1)) : 0;
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number.isFinite(db) ? db : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

export async function redisAnswers(url: string, timeoutMs = 1500): Promise<boolean> {
  const client = new IORedis({ ...redisOptionsFromUrl(url), lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/**
 * With REDIS_URL unset: use redis://127.0.0.1:6379, or start `redis-server` from PATH with its data
 * under dataDir/redis when nothing answers there.
 */
export async function resolveRedisUrl(configured: string | undefined, dataDir: string, log: (msg: string) => void): Promise<string> {
  if (configured) return configured;
  if (await redisAnswers(DEFAULT_REDIS_URL)) return DEFAULT_REDIS_URL;
  const dir = join(dataDir, 'redis');
  mkdirSync(dir, { recursive: true });
  log(`nothing answers on ${DEFAULT_REDIS_URL}; starting redis-server with its data in ${dir}`);
  const started = await new Promise<boolean>((resolve) => {
    const child = spawn('redis-server', ['--port', '6379', '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--daemonize', 'no'], {
      detached: true,
      stdio: 'ignore',
    });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
  if (started) {
    for (let i = 0; i < 50; i++) {
      if (await redisAnswers(DEFAULT_REDIS_URL, 500)) return DEFAULT_REDIS_URL;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(
    'Redis is required and none was found: set REDIS_URL to a reachable Redis (e.g. redis://127.0.0.1:6379), ' +
      'install it (Debian/Ubuntu: `apt-get install redis-server`; macOS: `brew install redis`) so redis-server is on PATH, ' +
      'or run `docker compose up redis`.',
  );
}
