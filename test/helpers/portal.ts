import { HttpClient } from './http';
import { TestApp } from './test-app';
import { TEST_SECRETS } from './test-env';

/** Portal times: `YYYY-MM-DD HH:MM` (UTC). */
export const PORTAL_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]) ([01]\d|2[0-3]):[0-5]\d$/;

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

export async function createApp(portal: HttpClient, input: AppInput): Promise<any> {
  const res = await portal.post('/portal-api/apps', input);
  if (res.status !== 200) throw new Error(`creating an app: ${res.status} ${res.text}`);
  return res.body;
}

export async function createAccessRequest(portal: HttpClient, input: AccessRequestInput): Promise<any> {
  const res = await portal.post('/portal-api/access_requests', {
    Catalogue: 'Public catalogue',
    Plan: 'Free plan',
    Products: ['weather-api', 'maps-api'],
    AuthType: 'authToken',
    DCREnabled: false,
    ProvisionImmediately: false,
    User: 'User#1',
    ...input,
  });
  if (res.status !== 201) throw new Error(`creating an access request: ${res.status} ${res.text}`);
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

/** Polls `check` until it returns something truthy, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | null | false>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
