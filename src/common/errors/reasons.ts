/** The most reasons one refusal tells: a body can hold a mistake every few bytes; its answer should not outgrow it. */
export const MAX_REASONS = 20;

/**
 * The first MAX_REASONS of `reasons`, then how many more there are (`and 3 more error(s)`); `more` counts reasons
 * found but not in the list. Free of imports, for the validation threads too.
 */
export function firstReasons(reasons: string[], more = 0): string[] {
  const told = reasons.slice(0, MAX_REASONS);
  const untold = reasons.length - told.length + more;
  return untold > 0 ? [...told, `and ${untold} more error(s)`] : told;
}
