import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { WebhookStore } from '../webhook.store';
import { PeriodicRunner } from '../../common/periodic/periodic.runner';

export const ERASE_INTERVAL_MS = 1000;

/**
 * Erases a webhook's previous signing key once its rotation's grace period has ended. Deliveries stop
 * using it at that moment already (the claim reads it only while it is valid); this takes it out of the
 * database too, within about a second. Idempotent, so every worker may run it; a partial index on the
 * expiry keeps the pass free when no key is in its grace period.
 */
@Injectable()
export class SigningKeyEraser implements OnApplicationBootstrap {
  private readonly logger = new Logger(SigningKeyEraser.name);

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly runner: PeriodicRunner,
  ) {}

  onApplicationBootstrap(): void {
    this.runner.schedule({
      name: 'signing-key eraser',
      intervalMs: ERASE_INTERVAL_MS,
      run: async () => {
        const erased = await this.webhooks.eraseExpiredSigningKeys();
        if (erased) this.logger.log({ webhooks: erased }, 'erased previous signing keys whose grace period ended');
      },
    });
  }
}
