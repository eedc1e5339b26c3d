'use strict';
// Postgres and Redis for one bench run: a fresh database per service start, a unique queue prefix,
// and teardown of both (DROP DATABASE; SCAN + DEL of `<prefix>:*`, never FLUSHALL).
const { Client } = require('pg');
const IORedis = require('ioredis');
const { redisOptionsFromUrl } = require('../../dist/queue/redis-connection');
const { deleteQueueKeys } = require('../../test/helpers/queue-keys');

/**
 * The admin URL used to CREATE/DROP the bench databases: DATABASE_URL if set (any database on the
 * server; the bench never touches that database's tables), else postgres://postgres@127.0.0.1:5432/postgres.
 */
const ADMIN_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

let seq = 0;
const created = new Set();

function dbUrl(name) {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin(fn) {
  const c = new Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** Creates an empty database gwm_bench_<pid>_<n>; returns { name, url }. */
async function createDatabase(tag = '') {
  const name = `gwm_bench_${process.pid}_${++seq}${tag ? `_${tag.replace(/\W/g, '')}` : ''}`.toLowerCase();
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  created.add(name);
  return { name, url: dbUrl(name) };
}

async function dropDatabase(name) {
  await admin(async (c) => {
    await c.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [name],
    );
    await c.query(`DROP DATABASE IF EXISTS "${name}"`);
  });
  created.delete(name);
}

async function dropAllDatabases() {
  for (const name of [...created])
    await dropDatabase(name).catch((err) => console.error(`could not drop ${name}: ${err.message}`));
}

function queuePrefix(tag = '') {
  return `gwmbench${process.pid}n${++seq}${tag.replace(/\W/g, '')}`;
}

const prefixes = new Set();
function usePrefix(prefix) {
  prefixes.add(prefix);
  return prefix;
}

/** The service's own URL → ioredis options (from the build `npm run bench` makes first). */
function redisOptions() {
  return redisOptionsFromUrl(REDIS_URL);
}

/** Deletes every key `<prefix>:*` (SCAN + DEL). */
async function deletePrefix(prefix) {
  await deleteQueueKeys(REDIS_URL, prefix);
  prefixes.delete(prefix);
}

async function deleteAllPrefixes() {
  for (const p of [...prefixes])
    await deletePrefix(p).catch((err) => console.error(`could not clean Redis prefix ${p}: ${err.message}`));
}

/** Checks that Postgres and Redis answer before anything starts. */
async function preflight() {
  await admin((c) => c.query('SELECT 1')).catch((err) => {
    throw new Error(
      `Postgres not reachable at ${ADMIN_URL.replace(/\/\/[^@]*@/, '//…@')}: ${err.message} (set DATABASE_URL)`,
    );
  });
  const r = new IORedis({ ...redisOptions(), lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    throw new Error(`Redis not reachable at ${REDIS_URL}: ${err.message} (set REDIS_URL)`, { cause: err });
  } finally {
    r.disconnect();
  }
}

async function versions() {
  const pg = await admin((c) => c.query('SHOW server_version'))
    .then((r) => r.rows[0].server_version)
    .catch(() => null);
  const r = new IORedis(redisOptions());
  const info = await r.info('server').catch(() => '');
  r.disconnect();
  const m = /redis_version:(\S+)/.exec(info);
  return { postgres: pg, redis: m ? m[1] : null };
}

module.exports = {
  ADMIN_URL,
  REDIS_URL,
  createDatabase,
  dropDatabase,
  dropAllDatabases,
  queuePrefix,
  usePrefix,
  deletePrefix,
  deleteAllPrefixes,
  redisOptions,
  preflight,
  versions,
};
