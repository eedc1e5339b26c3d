import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { PeriodicRunner } from '../periodic/periodic.runner';
import { IdempotencyStore } from './idempotency.store';

export const EXPIRY_INTERVAL_MS = 10 * 60_000;
/** Rows deleted per statement: each batch is a short transaction of its own, so no pass holds many locks. */
export const EXPIRY_BATCH = 1000;

/**
 * Deletes expired idempotency keys (answers past IDEMPOTENCY_KEY_TTL, claims of requests that died) every ten
 * minutes, in small batches. An expired key is already free to use before it is deleted; this only keeps the
 * table small. Every API process runs it; batches skip rows another process has locked.
 */
@Injectable()
export class IdempotencyExpiry implements OnApplicationBootstrap {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly runner: PeriodicRunner,
  ) {}

  onApplicationBootstrap(): void {
    this.runner.schedule({ name: 'idempotency key expiry', intervalMs: EXPIRY_INTERVAL_MS, run: () => this.run() });
  }

  /** One pass: batches until none is full. Returns how many keys were deleted. */
  async run(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.store.deleteExpired(EXPIRY_BATCH);
      total += deleted;
      if (deleted < EXPIRY_BATCH) return total;
    }
  }
}
