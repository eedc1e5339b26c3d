/** Event names a webhook may subscribe to (decisions §6). */
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
 * Events about the dispatcher itself, for operators. Each names the webhook it is about (`WebhookID`), and
 * is never delivered to that webhook.
 */
export const OPERATIONAL_EVENTS = ['WebhookDisabled', 'DeliveryFailed', 'WebhookEnabled'] as const satisfies readonly EmittedEvent[];
export type OperationalEvent = (typeof OPERATIONAL_EVENTS)[number];
