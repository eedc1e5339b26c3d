import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { PeriodicRunner } from '../periodic/periodic.runner';
import { IdempotencyExpiry } from './idempotency-expiry';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStore } from './idempotency.store';

/** Idempotent retries of every write of the portal, dashboard and admin families (API processes). */
@Module({
  providers: [
    IdempotencyStore,
    IdempotencyExpiry,
    PeriodicRunner,
    { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
  ],
})
export class IdempotencyModule {}
