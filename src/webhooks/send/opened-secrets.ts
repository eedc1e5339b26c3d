/**
 * What sealed secrets open to (a webhook's signing keys, its destination URL), kept for a short while so that
 * the attempts of one webhook decrypt and prepare them once rather than every time. Keyed by the sealed text,
 * which changes whenever the secret does (every sealing has its own IV). Bounded in number, and in age: an
 * entry is dropped `ttlMs` after it was opened, used or not, so a key erased from the database (a rotation's
 * grace period over) is gone from memory shortly after.
 */
export class OpenedSecrets<T> {
  /** In insertion order, which is also expiry order (every entry lives ttlMs from its insertion). */
  private readonly entries = new Map<string, { value: T; until: number }>();
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly open: (sealed: string) => T,
    private readonly opts: { max: number; ttlMs: number } = { max: 10_000, ttlMs: 60_000 },
    private readonly clock: () => number = Date.now,
  ) {}

  get(sealed: string): T {
    const now = this.clock();
    this.dropExpired(now);
    const hit = this.entries.get(sealed);
    if (hit) return hit.value;
    const value = this.open(sealed);
    if (this.entries.size >= this.opts.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(sealed, { value, until: now + this.opts.ttlMs });
    this.sweepLater();
    return value;
  }

  /** Entries held (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private dropExpired(now: number): void {
    for (const [sealed, e] of this.entries) {
      if (e.until > now) return;
      this.entries.delete(sealed);
    }
  }

  /** Drops expired entries even when nothing asks for one (an idle worker keeps no keys). */
  private sweepLater(): void {
    if (this.sweeper) return;
    this.sweeper = setTimeout(() => {
      this.sweeper = undefined;
      this.dropExpired(this.clock());
      if (this.entries.size > 0) this.sweepLater();
    }, this.opts.ttlMs);
    this.sweeper.unref();
  }
}
