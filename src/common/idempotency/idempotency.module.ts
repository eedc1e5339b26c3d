import { Module } from '@nestjs/common';
import { PeriodicRunner } from '../periodic/periodic.runner';
import { IdempotencyExpiry } from './idempotency-expiry';
import { IdempotencyStore } from './idempotency.store';
import { IdempotentRequests } from './idempotent-requests';

/**
 * Idempotent retries of every write of the portal, dashboard and admin families (API processes). Not an
 * interceptor: Nest would run its machinery on every request; see IdempotentRequests, registered by createApp.
 */
@Module({
  providers: [IdempotencyStore, IdempotencyExpiry, PeriodicRunner, IdempotentRequests],
})
export class IdempotencyModule {}
