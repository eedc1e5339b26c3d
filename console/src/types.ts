// Shapes of the portal routes the console reads and sends. They are the service's own: generated into
// api-types.generated.ts from its OpenAPI document (`npm run generate`), so a change on the service reaches the
// console's type check instead of drifting from a hand-kept copy.
import {
  type components,
  deliveryResponseStatusValues,
  accessRequestResponseStatusValues,
  webhookResponseEventsValues,
  webhookResponseMethodValues,
} from './api-types.generated';

type Schemas = components['schemas'];

export type Webhook = Schemas['WebhookResponse'];
/** The answer to a create: the webhook with its signing secret, shown once, and any warnings. */
export type CreatedWebhook = Schemas['CreatedWebhookResponse'];
/** The answer to an update: the webhook and any warnings. */
export type SavedWebhook = Schemas['SavedWebhookResponse'];
export type WebhookStats = Schemas['WebhookStatsResponse'];
/** What receivers verify signatures with, and the end of a rotation's overlap. */
export type WebhookSecret = Schemas['WebhookSecretResponse'];
export type WebhookTestResult = Schemas['WebhookTestResponse'];
export type RecoverResult = Schemas['RecoverResponse'];
/** The webhook form: every field the create route takes, filled in. */
export type WebhookInput = Required<Schemas['CreateWebhookDto']>;
export type WebhookEvent = Webhook['Events'][number];
export type WebhookMethod = Webhook['Method'];
export type SignatureScheme = Webhook['SignatureScheme'];

export type Delivery = Schemas['DeliveryResponse'];
export type Attempt = Schemas['AttemptResponse'];
export type DeliveryWithAttempts = Schemas['DeliveryWithAttemptsResponse'];

export type Credential = Schemas['CredentialResponse'];
export type AccessRequest = Schemas['AccessRequestResponse'];
export type App = Schemas['AppResponse'];

export const WEBHOOK_EVENTS: readonly WebhookEvent[] = webhookResponseEventsValues;
export const WEBHOOK_METHODS: readonly WebhookMethod[] = webhookResponseMethodValues;
export const DELIVERY_STATUSES: readonly Delivery['Status'][] = deliveryResponseStatusValues;
export const ACCESS_REQUEST_STATUSES: readonly AccessRequest['Status'][] = accessRequestResponseStatusValues;

/**
 * Events about the dispatcher itself, for operators; never delivered to the webhook they are about. The document
 * lists them with the others, so this subset is kept here (a console spec holds it to the service's).
 */
export const OPERATIONAL_EVENTS: readonly WebhookEvent[] = ['WebhookDisabled', 'DeliveryFailed', 'WebhookEnabled'];

/** How the form offers each signature scheme; the record type makes a new scheme need its label. */
const SCHEME_LABELS: Record<SignatureScheme, string> = {
  v1: 'v1 — HMAC-SHA256 with a shared whsec_ secret',
  v1a: 'v1a — Ed25519; receivers hold only the whpk_ public key',
};
export const SIGNATURE_SCHEMES = (Object.keys(SCHEME_LABELS) as SignatureScheme[]).map((value) => ({
  value,
  label: SCHEME_LABELS[value],
}));
