import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config';
import { Sql } from '../../database/sql';
import { EmittedEvent } from '../../events/event-names';
import { EventsService } from '../../events/events.service';
import { AttemptRecord, ClaimedDelivery, DeliveryStore, RecordOutcome } from '../delivery.store';
import { deliveryFailedMessage, raisesDeliveryFailed, webhookDisabledMessage } from '../operational-events';
import { DeliveryMetrics } from '../webhook-metrics';
import { WebhookStore } from '../webhook.store';

/**
 * What an attempt means for its webhook beyond its own delivery: the failing clock that switches a webhook
 * off once every attempt has failed for WEBHOOK_DISABLE_AFTER, the 410 that switches it off at once, and the
 * operational events (WebhookDisabled, DeliveryFailed), written in the same transaction as the change they
 * report. Steady state costs nothing: the clock is written only when a webhook starts or stops failing.
 */
@Injectable()
export class WebhookHealth {
  private readonly logger = new Logger(WebhookHealth.name);

  constructor(
    private readonly sql: Sql,
    private readonly store: DeliveryStore,
    private readonly webhooks: WebhookStore,
    private readonly events: EventsService,
    private readonly config: AppConfig,
    private readonly metrics: DeliveryMetrics,
  ) {}

  /** Whether recording this attempt must go with events or a switch-off (then through recordClosing). */
  closes(d: ClaimedDelivery, a: AttemptRecord, gone: boolean): boolean {
    return gone || failedForGood(d, a);
  }

  /**
   * Records an attempt that ends its delivery badly, in one transaction with what it causes: on 410 the
   * webhook is switched off (WebhookDisabled, reason gone, which says it all); a delivery that failed for
   * good otherwise (its whole schedule used, or its address blocked) raises DeliveryFailed, unless the webhook
   * was deleted while the attempt was out (its delivery is still there until the purge). A late answer of a claim
   * another worker took over is not recorded and causes nothing (`superseded`).
   */
  async recordClosing(d: ClaimedDelivery, a: AttemptRecord, gone: boolean): Promise<RecordOutcome> {
    let outcome: RecordOutcome = 'superseded';
    const disabled = await this.sql.transaction(async (tx) => {
      outcome = await this.store.recordAttempt(a, tx);
      if (outcome === 'superseded') return null;
      const events: { name: EmittedEvent; message: Record<string, unknown> }[] = [];
      const summary = { id: d.webhookId, name: d.webhookName, url: d.url };
      if (!gone && failedForGood(d, a) && (await this.webhooks.holdLive(tx, d.webhookId))) {
        events.push({
          name: 'DeliveryFailed',
          message: deliveryFailedMessage(
            summary,
            {
              id: d.id,
              eventId: d.eventId,
              eventName: d.eventName,
              attemptCount: a.number,
              statusCode: a.statusCode,
              error: a.error,
            },
            new Date(),
          ),
        });
      }
      const off = gone ? await this.webhooks.disable(tx, d.webhookId, 'gone') : null;
      if (off) events.push({ name: 'WebhookDisabled', message: webhookDisabledMessage(off, 'gone', off.disabledAt) });
      await this.events.recordAll(tx, events);
      return off;
    });
    if (disabled) {
      this.metrics.disabled('gone');
      this.logger.warn({ webhookId: d.webhookId }, 'subscriber answered 410 Gone: webhook switched off');
    }
    return outcome;
  }

  /** Keeps the webhook's failing clock after an attempt, and switches it off once it has run too long. */
  async observe(d: ClaimedDelivery, succeeded: boolean, startedAt: Date): Promise<void> {
    if (succeeded) {
      if (d.failingSince) await this.webhooks.markHealthy(d.webhookId);
      return;
    }
    if (!d.failingSince) {
      await this.webhooks.markFailing(d.webhookId, startedAt);
      return;
    }
    const limit = this.config.webhooks.disableAfterMs;
    if (startedAt.getTime() - new Date(d.failingSince).getTime() < limit) return;
    const off = await this.sql.transaction(async (tx) => {
      const w = await this.webhooks.disable(tx, d.webhookId, 'failing', limit);
      if (w) await this.events.record(tx, 'WebhookDisabled', webhookDisabledMessage(w, 'failing', w.disabledAt));
      return w;
    });
    if (off) {
      this.metrics.disabled('failing');
      this.logger.warn(
        { webhookId: d.webhookId, failingSince: d.failingSince },
        'every attempt failed for WEBHOOK_DISABLE_AFTER: webhook switched off',
      );
    }
  }
}

/** A scheduled attempt that fails its delivery for good (a manual redelivery is one attempt on request). */
function failedForGood(d: ClaimedDelivery, a: AttemptRecord): boolean {
  return a.status === 'failed' && a.trigger === 'scheduled' && raisesDeliveryFailed(d.eventName);
}
