import { Client } from 'pg';

/** How many sessions of the spec's database wait for a lock (to know that a raced statement is held where meant). */
export async function sessionsWaitingForLocks(db: { query(text: string): Promise<any[]> }): Promise<number> {
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return row.n;
}

/**
 * A session of its own that takes ACCESS EXCLUSIVE locks on `tables` and holds them (its transaction left open) until
 * release(): every statement of the service that reads one of them waits meanwhile. `waiting()` counts the sessions
 * that wait for a lock.
 */
export async function lockTables(
  databaseUrl: string,
  tables: string[],
): Promise<{ waiting(): Promise<number>; release(): Promise<void> }> {
  const locker = new Client({ connectionString: databaseUrl });
  await locker.connect();
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${tables.join(', ')} IN ACCESS EXCLUSIVE MODE`);
  } catch (err) {
    await locker.end();
    throw err;
  }
  return {
    waiting: async () => {
      // inside its transaction the session would read pg_stat_activity as first read, again and again
      await locker.query('SELECT pg_stat_clear_snapshot()');
      return sessionsWaitingForLocks({ query: async (text) => (await locker.query(text)).rows });
    },
    release: async () => {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.end();
    },
  };
}
