/** How many sessions of the spec's database wait for a lock (to know that a raced statement is held where meant). */
export async function sessionsWaitingForLocks(db: { query(text: string): Promise<any[]> }): Promise<number> {
  const [row] = await db.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
  );
  return row.n;
}
