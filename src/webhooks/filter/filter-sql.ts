import { pgCode, Queryable } from '../../database/sql';

/**
 * The event as delivered (`{"Event", "Message", "Timestamp"}`), built in SQL from the outbox columns of `e`
 * (name, payload, occurred_at): what a filter's paths read. Timestamp is spelled as the delivery body spells it
 * (RFC 3339, UTC, milliseconds), so a comparison on it reads the same in the test route.
 */
export const FILTERED_ENVELOPE = (e: string): string =>
  `jsonb_build_object('Event', ${e}.name, 'Message', ${e}.payload,
                      'Timestamp', to_char(${e}.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * Whether webhook `w`'s filter accepts outbox event `e`: true without a filter, and then nothing is built nor
 * evaluated. Silent, so that no event can make fan-out fail (a compiled filter is a predicate over exists(),
 * which is never an error anyway).
 */
export const FILTER_ACCEPTS = (w: string, e: string): string =>
  `(${w}.filter_path IS NULL OR jsonb_path_match(${FILTERED_ENVELOPE(e)}, ${w}.filter_path, '{}', true) IS TRUE)`;

/**
 * Why PostgreSQL cannot read compiled filter `path`, or null when it can: the last word on a filter, as fan-out
 * evaluates it there (the compiler and the checks before it are meant to make this never answer). Only the
 * database's refusal of the path is answered; any other failure is thrown.
 */
export async function jsonPathRefusal(db: Queryable, path: string): Promise<string | null> {
  try {
    await db.query(`SELECT $1::jsonpath`, [path]);
    return null;
  } catch (err) {
    const code = pgCode(err) ?? '';
    // data exceptions (an invalid regular expression...) and syntax errors
    if (code.startsWith('22') || code.startsWith('42')) return (err as Error).message;
    throw err;
  }
}
