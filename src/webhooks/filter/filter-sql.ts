/**
 * The event as delivered (`{"Event", "Message", "Timestamp"}`), built in SQL from an outbox row aliased `e`
 * inside an `UPDATE ... RETURNING`: what a filter's paths read. Timestamp is spelled as the delivery body
 * spells it (RFC 3339, UTC, milliseconds), so a comparison on it reads the same in the test route.
 */
export const FILTERED_ENVELOPE = `jsonb_build_object('Event', name, 'Message', payload,
                                  'Timestamp', to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;

/**
 * Whether webhook `w`'s filter accepts `envelope`: true without a filter. Silent, so that no event can make
 * fan-out fail (a compiled filter is a predicate over exists(), which is never an error anyway).
 */
export const FILTER_ACCEPTS = (w: string, envelope: string): string =>
  `(${w}.filter_path IS NULL OR jsonb_path_match(${envelope}, ${w}.filter_path, '{}', true) IS TRUE)`;
