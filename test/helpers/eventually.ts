/**
 * Polls `check` every `everyMs` until it returns something truthy, and returns that; fails after `timeoutMs` naming
 * `what`. A check that throws counts as not yet (the state it reads may be half made), and its last error is told.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 15_000,
  what = 'condition',
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
