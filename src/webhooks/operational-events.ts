import {
  DeliveryFailedMessage,
  MessageOf,
  WebhookDisabledMessage,
  WebhookEnabledMessage,
} from '../events/event-messages';
import { OPERATIONAL_EVENTS } from '../events/event-names';
import { maskCredentials } from './send/destination';

/** Why a webhook is inactive: 410 Gone, failing for WEBHOOK_DISABLE_AFTER, or switched off by PUT. */
export const DISABLED_REASONS = ['gone', 'failing', 'manual'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** What the operational events say about a webhook; its URL is shown without a password, as answers show it. */
export interface WebhookSummary {
  id: string;
  name: string;
  url: string;
}

export function webhookDisabledMessage(
  w: WebhookSummary,
  reason: DisabledReason,
  at: Date,
): MessageOf<WebhookDisabledMessage> {
  return { WebhookID: w.id, Name: w.name, URL: maskCredentials(w.url), Reason: reason, DisabledAt: at.toISOString() };
}

export function webhookEnabledMessage(w: WebhookSummary, at: Date): MessageOf<WebhookEnabledMessage> {
  return { WebhookID: w.id, Name: w.name, URL: maskCredentials(w.url), EnabledAt: at.toISOString() };
}

export function deliveryFailedMessage(
  w: WebhookSummary,
  d: {
    id: string;
    eventId: string;
    eventName: string;
    attemptCount: number;
    statusCode: number | null;
    error: string | null;
  },
  at: Date,
): MessageOf<DeliveryFailedMessage> {
  return {
    WebhookID: w.id,
    Name: w.name,
    URL: maskCredentials(w.url),
    DeliveryID: d.id,
    EventID: d.eventId,
    Event: d.eventName,
    AttemptCount: d.attemptCount,
    LastStatusCode: d.statusCode ?? 0,
    LastError: d.error ?? 'http_status',
    FailedAt: at.toISOString(),
  };
}

const OPERATIONAL = new Set<string>(OPERATIONAL_EVENTS);

/**
 * A failed delivery of an operational event raises no DeliveryFailed: two failing operator webhooks would
 * otherwise tell each other about each other's failures forever.
 */
export function raisesDeliveryFailed(eventName: string): boolean {
  return !OPERATIONAL.has(eventName);
}
