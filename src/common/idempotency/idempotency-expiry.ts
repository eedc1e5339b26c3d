import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
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
export class IdempotencyExpiry implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(IdempotencyExpiry.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopping = false;

  constructor(private readonly store: IdempotencyStore) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      if (this.running) return;
      this.running = this.run()
        .catch((err) => this.logger.warn({ err }, 'deleting expired idempotency keys failed; will retry'))
        .finally(() => (this.running = undefined));
    };
    this.timer = setInterval(tick, EXPIRY_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass: batches until none is full. Returns how many keys were deleted. */
  async run(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.store.deleteExpired(EXPIRY_BATCH);
      total += deleted;
      if (deleted < EXPIRY_BATCH || this.stopping) return total;
    }
  }
}
