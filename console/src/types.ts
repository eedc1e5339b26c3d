// Shapes of the portal routes the console reads, as the service documents them in /docs-json.

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

/** Events about the dispatcher itself, for operators; never delivered to the webhook they are about. */
export const OPERATIONAL_EVENTS: readonly string[] = ['WebhookDisabled', 'DeliveryFailed', 'WebhookEnabled'];

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'] as const;
export const SIGNATURE_SCHEMES = [
  { value: 'v1', label: 'v1 — HMAC-SHA256 with a shared whsec_ secret' },
  { value: 'v1a', label: 'v1a — Ed25519; receivers hold only the whpk_ public key' },
] as const;
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export const ACCESS_REQUEST_STATUSES = ['pending', 'approved', 'rejected'] as const;

export interface WebhookHeader {
  ID?: string;
  Name: string;
  Value: string;
}

export interface Webhook {
  ID: string;
  Name: string;
  URL: string;
  Method: string;
  Timeout: number;
  Headers: WebhookHeader[];
  Events: string[];
  Active: boolean;
  SignatureScheme: string;
  /** Why it is inactive (gone, failing, manual); null while active. */
  DisabledReason: string | null;
  DisabledAt: string | null;
  /** Deliveries per second at most; null: no limit. */
  RateLimit: number | null;
  Ordered: boolean;
  CreatedAt: string;
  UpdatedAt: string;
}

export interface WebhookStats {
  WebhookID: string;
  Since: string;
  Until: string;
  Delivered: number;
  Failed: number;
  Pending: number;
  Retrying: number;
  SuccessRate: number | null;
  Attempts: number;
  LatencyP50Ms: number | null;
  LatencyP95Ms: number | null;
  LastSuccessAt: string | null;
  LastFailure: { At: string; StatusCode: number | null; Error: string; ResponseBody: string } | null;
}

/** What receivers verify signatures with, and the end of a rotation's overlap. */
export interface WebhookSecret {
  Secret: string;
  SignatureScheme: string;
  PublicKey: string | null;
  PreviousSecretExpiresAt: string | null;
}

export interface WebhookTestResult {
  DeliveryID: string;
  EventID: string;
}

export interface WebhookInput {
  Name: string;
  URL: string;
  Method: string;
  Timeout: number;
  Events: string[];
  Headers: { Name: string; Value: string }[];
  Active: boolean;
  SignatureScheme: string;
  RateLimit: number | null;
  Ordered: boolean;
}

export interface Delivery {
  ID: string;
  WebhookID: string;
  EventID: string;
  Event: string;
  Status: (typeof DELIVERY_STATUSES)[number];
  AttemptCount: number;
  NextAttemptAt: string | null;
  CreatedAt: string;
  UpdatedAt: string;
}

export interface Attempt {
  Number: number;
  StartedAt: string;
  StatusCode: number | null;
  DurationMs: number;
  Error: string | null;
  ResponseBody: string;
  Trigger: 'scheduled' | 'manual';
}

export interface DeliveryWithAttempts extends Delivery {
  Attempts: Attempt[];
}

export interface Credential {
  AccessRequest: string;
  Credential: string;
  CredentialHash: string;
  OAuthClientID: string;
  OAuthClientSecret: string;
  RedirectURI: string;
  Scope: string;
  ResponseType: string;
  TokenEndpoints: string;
  Expires: string;
  DCRRegistrationAccessToken: string;
  DCRRegistrationClientURI: string;
  DCRResponse: string;
}

export interface AccessRequest {
  ID: number;
  AppID: number;
  Catalogue: string;
  Client: string;
  Plan: string;
  User: string;
  AuthType: string;
  DCREnabled: boolean;
  ProvisionImmediately: boolean;
  Status: (typeof ACCESS_REQUEST_STATUSES)[number];
  Products: string;
  ProductIDs: number[];
  PlanID: number;
  Credentials: Credential[];
  CreatedAt: string;
  UpdatedAt: string;
}

export interface App {
  ID: number;
  Name: string;
  Description: string;
  RedirectURLs: string;
  UserID: number;
  Visibility: string;
  AccessRequests: unknown[][];
  CreatedAt: string;
}
