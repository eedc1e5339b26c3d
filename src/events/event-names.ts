/** Event names a webhook may subscribe to: every event of the portal product, including those others emit. */
export const WEBHOOK_EVENTS = [
  'AccessRequestCreated',
  'AccessRequestApproved',
  'AccessRequestRejected',
  'ApplicationRegistered',
  'CredentialRegistered',
  'OrganisationRequestCreated',
  'OrganisationRequestApproved',
  'OrganisationRequestRejected',
  'OrganisationRegistered',
  'UserRegistered',
  'UserAccountActivated',
  'UserAccountDeactivated',
  'PasswordReset',
  'RegisterInvite',
  'WebhookDisabled',
  'DeliveryFailed',
  'WebhookEnabled',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The events this service emits itself. */
export const EMITTED_EVENTS = [
  'AccessRequestCreated',
  'AccessRequestApproved',
  'AccessRequestRejected',
  'ApplicationRegistered',
  'CredentialRegistered',
  'WebhookDisabled',
  'DeliveryFailed',
  'WebhookEnabled',
] as const satisfies readonly WebhookEvent[];
export type EmittedEvent = (typeof EMITTED_EVENTS)[number];

/**
 * Sent by hand to one webhook to check its endpoint (`POST /portal-api/webhooks/{id}/test`). Not one of
 * WEBHOOK_EVENTS: nobody subscribes to it, and it only ever reaches the webhook it was sent to.
 */
export const WEBHOOK_TEST_EVENT = 'WebhookTest';
export type DirectedEvent = typeof WEBHOOK_TEST_EVENT;

/**
 * Events about the dispatcher itself, for operators. Each names the webhook it is about (`WebhookID`), and
 * is never delivered to that webhook.
 */
export const OPERATIONAL_EVENTS = [
  'WebhookDisabled',
  'DeliveryFailed',
  'WebhookEnabled',
] as const satisfies readonly EmittedEvent[];
export type OperationalEvent = (typeof OPERATIONAL_EVENTS)[number];
