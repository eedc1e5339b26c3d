import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DeliveryStore } from '../delivery.store';

export const ERASE_INTERVAL_MS = 1000;

/**
 * Erases a webhook's previous signing key once its rotation's grace period has ended. Deliveries stop
 * using it at that moment already (the claim reads it only while it is valid); this takes it out of the
 * database too, within about a second. Idempotent, so every worker may run it.
 */
@Injectable()
export class SigningKeyEraser implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SigningKeyEraser.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(private readonly store: DeliveryStore) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), ERASE_INTERVAL_MS);
    this.timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.store
      .eraseExpiredSigningKeys()
      .then((erased) => {
        if (erased) this.logger.log({ webhooks: erased }, 'erased previous signing keys whose grace period ended');
      })
      .catch((err) => this.logger.warn({ err }, 'could not erase expired signing keys; will retry'))
      .finally(() => (this.running = undefined));
  }
}
