// Shapes of the portal routes the console reads and sends. They are the service's own: generated into
// api-types.generated.ts from its OpenAPI document (`npm run generate`), so a change on the service reaches the
// console's type check instead of drifting from a hand-kept copy.
import {
  type components,
  deliveryResponseStatusValues,
  accessRequestResponseStatusValues,
  webhookResponseEventsValues,
  webhookResponseMethodValues,
  webhookResponseTypeValues,
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
/** Whether a filter accepts a sample event (the filter test route). */
export type FilterTestResult = Schemas['FilterTestResponse'];
export type RecoverResult = Schemas['RecoverResponse'];
type CreateWebhook = Schemas['CreateWebhookDto'];
/** Members the create route takes null for (as absent: the default); the form always fills them in. */
type DefaultedOnNull = 'Method' | 'Timeout' | 'Headers' | 'SignatureScheme';
/** The webhook form: every field the create route takes, filled in (the filter is edited as JSON text apart). */
export type WebhookInput = Required<Omit<CreateWebhook, 'Filter' | DefaultedOnNull>> & {
  [K in DefaultedOnNull]-?: NonNullable<CreateWebhook[K]>;
};
export type WebhookEvent = Webhook['Events'][number];
export type WebhookMethod = Webhook['Method'];
export type SignatureScheme = Webhook['SignatureScheme'];
/** Where deliveries go: an answer leaves Type out for http, the default. */
export type DestinationType = NonNullable<Webhook['Type']>;

export type Delivery = Schemas['DeliveryResponse'];
export type Attempt = Schemas['AttemptResponse'];
export type AttemptError = NonNullable<Attempt['Error']>;
export type DeliveryWithAttempts = Schemas['DeliveryWithAttemptsResponse'];

export type Credential = Schemas['CredentialResponse'];
export type AccessRequest = Schemas['AccessRequestResponse'];
export type App = Schemas['AppResponse'];

export const WEBHOOK_EVENTS: readonly WebhookEvent[] = webhookResponseEventsValues;
export const WEBHOOK_METHODS: readonly WebhookMethod[] = webhookResponseMethodValues;
export const DESTINATION_TYPES: readonly DestinationType[] = webhookResponseTypeValues;
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

/** One option of a destination type, as the form asks for it. */
export interface DestinationOption {
  name: string;
  label: string;
  placeholder: string;
  required: boolean;
}

/**
 * How the form asks for each destination type's URL and options (the service checks them and names what is
 * wrong); the record type makes a new type need its entry.
 */
export const DESTINATIONS: Record<
  DestinationType,
  { label: string; urlPlaceholder: string; options: DestinationOption[] }
> = {
  http: { label: 'HTTP — a request to a URL', urlPlaceholder: 'https://hooks.example.com/portal', options: [] },
  rabbitmq: {
    label: 'RabbitMQ — a message published to an exchange',
    urlPlaceholder: 'amqp://user:password@mq.example.com:5672/vhost',
    options: [
      { name: 'Exchange', label: 'Exchange (empty: the default exchange)', placeholder: 'portal', required: false },
      {
        name: 'RoutingKey',
        label: "Routing key (empty: the event's name)",
        placeholder: 'portal.access.approved',
        required: false,
      },
    ],
  },
  nats: {
    label: 'NATS JetStream — a message on a subject a stream captures',
    urlPlaceholder: 'nats://user:password@nats.example.com:4222',
    options: [{ name: 'Subject', label: 'Subject', placeholder: 'portal.access.approved', required: true }],
  },
};
