import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
import type { AppConfig } from '../config';
import { SHARED_QUEUE_PREFIX, hashTaggedPrefix } from './redis-connection';

/**
 * With no QUEUE_PREFIX, every Redis key starts with the database's own prefix, `{gwm-` and eight hex digits: a digest
 * of the random id the DeploymentIdentity migration stored, the PostgreSQL server's system identifier, and the
 * database's oid and name. Deployments on different databases that share a Redis then keep apart (with one prefix,
 * a worker took the other deployment's jobs, found no such delivery, and the owner's reconciler queued it again
 * seconds later), even when one database was cloned from another (CREATE DATABASE ... TEMPLATE, or a dump restored
 * on another server), which copies the stored id. Every process of one deployment, API or worker, reads the same
 * database and so agrees, whatever host name it reaches it by. A database renamed or moved to another server gets a
 * new prefix: the reconciler queues its pending deliveries again under it.
 *
 * A database that held webhooks before the migration keeps `{gwm}` (its jobs are there). A `deployment` table
 * emptied by hand gets a new identity, as a database made anew would.
 *
 * The digest is kept as `config.redis.deployment` whatever the prefix: workers say by it, under the prefix, that
 * their deployment is there (PrefixNeighbours). Run once per start, after the migrations and before the application
 * (and its queues) is made, on `db`. Answers the prefix it settled, or undefined when QUEUE_PREFIX chose it.
 */
export async function settleQueuePrefix(config: AppConfig, db: ClientBase): Promise<string | undefined> {
  const read = () =>
    db.query<{ id: string; keeps_shared_prefix: boolean; oid: string; name: string }>(
      `SELECT d.id, d.keeps_shared_prefix, db.oid::text AS oid, db.datname AS name
         FROM deployment d, pg_database db WHERE db.datname = current_database()`,
    );
  let [row] = (await read()).rows;
  if (!row) {
    // its one row deleted by hand: a new identity, as the migration makes one (a new prefix, under which the
    // reconciler queues the pending deliveries again); several processes starting at once make one between them
    await db.query(`INSERT INTO deployment (keeps_shared_prefix) VALUES (false) ON CONFLICT DO NOTHING`);
    [row] = (await read()).rows;
  }
  // (readable by any role on a stock server; a managed one may withhold it, and the oid and name still tell the
  // databases of one server apart)
  const server = await db.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()').then(
    (r) => r.rows[0]?.id ?? '',
    () => '',
  );
  const identity = `${row.id}:${server}:${row.oid}:${row.name}`;
  config.redis.deployment = createHash('sha256').update(identity).digest('hex').slice(0, 8);
  if (!config.redis.prefixFromDatabase) return undefined;
  const prefix = row.keeps_shared_prefix ? SHARED_QUEUE_PREFIX : `${SHARED_QUEUE_PREFIX}-${config.redis.deployment}`;
  config.redis.prefix = hashTaggedPrefix(prefix);
  return config.redis.prefix;
}
