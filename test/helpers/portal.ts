import type { components } from '../../console/src/api-types.generated';
import { HttpClient } from './http-client';
import { TestApp } from './test-app';
import { TEST_SECRETS } from './test-env';

export type CreatedWebhook = components['schemas']['CreatedWebhookResponse'];

/** Portal times: `YYYY-MM-DD HH:MM` (UTC). */
export const PORTAL_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d$/;

/** Event and delivery times: RFC 3339, UTC, with milliseconds. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Webhook, delivery and event ids. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A positive integer (ids are integers on the portal). */
export const anInteger = (): any => ({
  asymmetricMatch: (v: unknown) => Number.isInteger(v) && (v as number) > 0,
  toAsymmetricMatcher: () => 'a positive integer',
});

export function portalClient(t: TestApp): HttpClient {
  return t.http.with({ authorization: TEST_SECRETS.PORTAL_API_TOKEN });
}

export interface AppInput {
  Name: string;
  Description?: string;
  RedirectURLs?: string;
  UserID?: number;
  Visibility?: string;
}

export interface AccessRequestInput {
  AppID: number;
  Catalogue?: string;
  Plan?: string;
  Products?: string[];
  ProductIDs?: number[];
  PlanID?: number;
  AuthType?: string;
  DCREnabled?: boolean;
  ProvisionImmediately?: boolean;
  User?: string;
}

/** The body of a POST /portal-api/access_requests: an authToken request for two products, with `input` on top. */
export function accessRequestBody(input: AccessRequestInput): AccessRequestInput {
  return {
    Catalogue: 'Public catalogue',
    Plan: 'Free plan',
    Products: ['weather-api', 'maps-api'],
    AuthType: 'authToken',
    DCREnabled: false,
    ProvisionImmediately: false,
    User: 'User#1',
    ...input,
  };
}

/**
 * What the portal answers for a pending access request made from accessRequestBody's defaults, field by field, with
 * `fields` (ID, AppID, Client, Products as the route shows them...) on top.
 */
export function accessRequestAnswer(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    Catalogue: 'Public catalogue',
    Plan: 'Free plan',
    User: 'User#1',
    AuthType: 'authToken',
    DCREnabled: false,
    ProvisionImmediately: false,
    Status: 'pending',
    ProductIDs: [],
    PlanID: 0,
    Credentials: [],
    CreatedAt: expect.stringMatching(PORTAL_TIME),
    UpdatedAt: expect.stringMatching(PORTAL_TIME),
    DeletedAt: '1970-01-01 00:00',
    ...fields,
  };
}

/** A request provisioned at once with dynamic client registration: the provider is called on creation. */
export const PROVISIONED_WITH_DCR: Omit<AccessRequestInput, 'AppID'> = {
  Catalogue: 'c',
  Plan: 'p',
  Products: ['x'],
  AuthType: 'oauth2.0',
  DCREnabled: true,
  ProvisionImmediately: true,
};

export async function createApp(portal: HttpClient, input: AppInput): Promise<any> {
  const res = await portal.post('/portal-api/apps', input);
  if (res.status !== 200) throw new Error(`creating an app: ${res.status} ${res.text}`);
  return res.body;
}

export async function createAccessRequest(portal: HttpClient, input: AccessRequestInput): Promise<any> {
  const res = await portal.post('/portal-api/access_requests', accessRequestBody(input));
  if (res.status !== 201) throw new Error(`creating an access request: ${res.status} ${res.text}`);
  return res.body;
}

/** Registers a webhook; anything but 201 fails the spec with the service's answer. */
export async function createWebhook(
  portal: HttpClient,
  input: { URL: string; Name?: string; Events?: string[] } & Record<string, unknown>,
): Promise<CreatedWebhook> {
  const res = await portal.post('/portal-api/webhooks', { Name: 'w', Events: ['AccessRequestApproved'], ...input });
  if (res.status !== 201) throw new Error(`creating a webhook: ${res.status} ${res.text}`);
  return res.body;
}

export interface OutboxRow {
  id: string;
  name: string;
  payload: Record<string, any>;
  relayed_at: Date | null;
}

/** Outbox rows of `name` whose Message concerns `key` = `value` (e.g. ID 5 or AccessRequestID 5). */
export async function outboxRows(t: TestApp, name: string, key: string, value: number): Promise<OutboxRow[]> {
  return t.db.query(
    `SELECT id, name, payload, relayed_at FROM outbox_events WHERE name = $1 AND payload->>$2 = $3 ORDER BY occurred_at`,
    [name, key, String(value)],
  );
}

/** How many credential rows (revoked ones too) access request `id` has. */
export async function credentialCount(t: TestApp, id: number): Promise<number> {
  const [row] = await t.db.query(`SELECT count(*)::int AS count FROM portal_credentials WHERE access_request_id = $1`, [
    id,
  ]);
  return row.count;
}

/** How many access requests exist, and how many outbox events have a name LIKE `eventPattern`. */
export async function accessRequestTally(
  t: TestApp,
  eventPattern: string,
): Promise<{ requests: number; events: number }> {
  const [row] = await t.db.query(
    `SELECT (SELECT count(*)::int FROM portal_access_requests) AS requests,
            (SELECT count(*)::int FROM outbox_events WHERE name LIKE $1) AS events`,
    [eventPattern],
  );
  return row;
}
