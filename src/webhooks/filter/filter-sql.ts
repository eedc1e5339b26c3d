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
