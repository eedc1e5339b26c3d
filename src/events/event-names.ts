/** Event names a webhook may subscribe to: the gateway product family's catalogue (this service emits the first five). */
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
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** The events this service emits itself. */
export const EMITTED_EVENTS = [
  'AccessRequestCreated',
  'AccessRequestApproved',
  'AccessRequestRejected',
  'ApplicationRegistered',
  'CredentialRegistered',
] as const satisfies readonly WebhookEvent[];
export type EmittedEvent = (typeof EMITTED_EVENTS)[number];
