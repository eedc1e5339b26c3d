import { spawn } from 'node:child_process';
import { join } from 'node:path';
import IORedis, { Cluster, ClusterOptions, RedisOptions } from 'ioredis';
import { withDeadline } from '../common/deadline';
import { makeDataDirectory } from '../config/data-directory';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** A Redis Cluster named by its seed nodes; the client learns the rest of the topology from them. */
export interface ClusterTarget {
  nodes: { host: string; port: number }[];
  username?: string;
  password?: string;
  tls: boolean;
}

/** Where Redis is: one server (a redis:// URL) or a cluster. */
export interface RedisTarget {
  url?: string;
  cluster?: ClusterTarget;
}

const CLUSTER_URL = /^(rediss?)-cluster:\/\//;

export function isClusterUrl(url: string): boolean {
  return CLUSTER_URL.test(url);
}

/**
 * Parses a cluster's seed nodes, given either as REDIS_CLUSTER_NODES (`host:port,host:port`, IPv6 as
 * `[::1]:7000`; an item may also be a `redis://` or `rediss://` URL, whose credentials and TLS then apply
 * to every node) or as a URL `redis-cluster://[user:password@]host:port,host:port` (`rediss-cluster://`
 * for TLS). Throws an Error saying what is wrong.
 */
export function parseClusterTarget(value: string): ClusterTarget {
  const target: ClusterTarget = { nodes: [], tls: false };
  let list = value.trim();
  const m = CLUSTER_URL.exec(list);
  if (m) {
    target.tls = m[1] === 'rediss';
    list = list.slice(m[0].length).replace(/\/+$/, '');
    const at = list.lastIndexOf('@');
    if (at >= 0) {
      const [user, ...pass] = list.slice(0, at).split(':');
      target.username = user ? decodeURIComponent(user) : undefined;
      target.password = pass.length ? decodeURIComponent(pass.join(':')) : undefined;
      list = list.slice(at + 1);
    }
  }
  for (const raw of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    let hostPort = raw;
    if (/^rediss?:\/\//.test(raw)) {
      const u = new URL(raw);
      if (u.protocol === 'rediss:') target.tls = true;
      if (u.username) target.username = decodeURIComponent(u.username);
      if (u.password) target.password = decodeURIComponent(u.password);
      hostPort = u.host;
    }
    const hp = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s/]+)):(\d{1,5})$/.exec(hostPort);
    const port = hp ? Number(hp[3]) : NaN;
    if (!hp || port < 1 || port > 65535) throw new Error(`"${raw}" is not host:port`);
    target.nodes.push({ host: hp[1] ?? hp[2], port });
  }
  if (target.nodes.length === 0) throw new Error('names no node (expected host:port,host:port,...)');
  return target;
}

/** The prefix of a deployment with no QUEUE_PREFIX whose database predates its own (see settleQueuePrefix). */
export const SHARED_QUEUE_PREFIX = 'gwm';

/**
 * Every key this service writes starts with this prefix. It is a Redis Cluster hash tag (`{gwm}`), so all
 * keys of a queue live in one slot and BullMQ's multi-key scripts work on a cluster; a single server
 * ignores the braces. A prefix that already carries a tag is used as it is.
 */
export function hashTaggedPrefix(prefix: string): string {
  return /\{[^}]+\}/.test(prefix) ? prefix : `{${prefix}}`;
}

/**
 * How long a lost connection (to one server, or to a cluster) waits before each try to reconnect: at most 2 s, as
 * ioredis's own default. BullMQ builds its connections with a default of its own, e^tries ms (at least 1 s) capped at
 * 20 s, which reaches the 20 s after about 15 s of outage: its workers then went on waiting up to 20 s after Redis was
 * back before they took a job again (and the reconciler before it queued what the outage left out).
 */
export const reconnectDelay = (tries: number): number => Math.min(tries * 100, 2000);

/**
 * How long a connection being dropped waits for the server to close its side before cutting it (ioredis's
 * disconnectTimeout, 2 s by default). A server that answers closes at once; a frozen one never does, and a stop that
 * drops its connections to it (closeWithin) waited the whole 2 s once for each of them.
 */
export const DISCONNECT_WAIT_MS = 500;

/** A client for the target: ioredis for one server, ioredis Cluster for a cluster. */
export function createRedisClient(target: RedisTarget, overrides: RedisOptions = {}): IORedis | Cluster {
  if (target.cluster) return new Cluster(target.cluster.nodes, clusterOptions(target.cluster, overrides));
  return new IORedis({ ...redisOptionsFromUrl(target.url ?? DEFAULT_REDIS_URL), ...overrides });
}

/** A target from a URL: `redis://`/`rediss://` for one server, `redis-cluster://`/`rediss-cluster://` for a cluster. */
export function redisTargetFromUrl(url: string): RedisTarget {
  return isClusterUrl(url) ? { cluster: parseClusterTarget(url) } : { url };
}

function clusterOptions(c: ClusterTarget, overrides: RedisOptions): ClusterOptions {
  return {
    // BullMQ's blocking commands need requests that wait for a reconnection instead of failing
    redisOptions: {
      username: c.username,
      password: c.password,
      tls: c.tls ? {} : undefined,
      maxRetriesPerRequest: null,
      disconnectTimeout: DISCONNECT_WAIT_MS,
      ...overrides,
    },
    lazyConnect: overrides.lazyConnect,
    enableReadyCheck: true,
    slotsRefreshTimeout: 2000,
    clusterRetryStrategy: reconnectDelay,
  };
}

/** Turns a redis:// or rediss:// URL into ioredis options suitable for BullMQ (its reconnect delay replaced). */
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
    retryStrategy: reconnectDelay,
    disconnectTimeout: DISCONNECT_WAIT_MS,
  };
}

/** A client for one check at start-up: it connects when asked, tries once, and gives up within `timeoutMs`. */
function checkingClient(options: RedisOptions, timeoutMs: number): IORedis {
  return new IORedis({
    ...options,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
}

export async function redisAnswers(url: string, timeoutMs = 1500): Promise<boolean> {
  const client = checkingClient(redisOptionsFromUrl(url), timeoutMs);
  client.on('error', () => undefined);
  try {
    // a server that takes the connection and never answers (a frozen host) answers no more than one that is down
    return (
      (await withDeadline(
        client.connect().then(() => client.ping()),
        timeoutMs,
      )) === 'PONG'
    );
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** Replies of a server that refuses a URL's credentials or database number: a setting to fix, not an outage. */
const REFUSED = /^(WRONGPASS|NOAUTH|ERR DB index)/;

/**
 * What the server at a redis:// URL refuses of it, in the server's words (a wrong password, a database number
 * it does not have), or undefined when it accepts them or cannot be reached (an outage is not a setting).
 * ioredis alone would carry on after a refused SELECT, on database 0.
 */
export async function redisRefusal(url: string, timeoutMs = 1500): Promise<string | undefined> {
  const { db, ...options } = redisOptionsFromUrl(url);
  const client = checkingClient(options, timeoutMs);
  let refusal: string | undefined;
  const note = (err: Error) => {
    if (REFUSED.test(err.message)) refusal ??= err.message;
  };
  client.on('error', note);
  try {
    // bounded: a server that takes the connection and never answers (a frozen host) is an outage, not a setting
    await withDeadline(
      client.connect().then(() => (db ? client.select(db) : undefined)),
      timeoutMs,
    );
  } catch (err) {
    note(err as Error);
  } finally {
    client.disconnect();
  }
  return refusal;
}

/**
 * With REDIS_URL unset: use redis://127.0.0.1:6379, or start `redis-server` from PATH with its data
 * under dataDir/redis when nothing answers there.
 */
export async function resolveRedisUrl(
  configured: string | undefined,
  dataDir: string,
  log: (msg: string) => void,
): Promise<string> {
  if (configured) return configured;
  if (await redisAnswers(DEFAULT_REDIS_URL)) return DEFAULT_REDIS_URL;
  const dir = join(dataDir, 'redis');
  makeDataDirectory(dir, 'the Redis it starts', 'REDIS_URL');
  log(`nothing answers on ${DEFAULT_REDIS_URL}; starting redis-server with its data in ${dir}`);
  const started = await new Promise<boolean>((resolve) => {
    const child = spawn(
      'redis-server',
      ['--port', '6379', '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--daemonize', 'no'],
      {
        detached: true,
        stdio: 'ignore',
      },
    );
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
