import { Webhook } from 'standardwebhooks';
import { EMITTED_EVENTS } from '../../src/events/event-names';
import { createAccessRequest, createApp, createWebhook } from '../helpers/portal';
import { useService } from '../helpers/use-service';

/** RFC 3339 with a fraction of a second, in UTC or with an offset. */
const RFC3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d+(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

interface Delivered {
  Event: string;
  Message: Record<string, unknown>;
  Timestamp: string;
}

function expectRfc3339(value: unknown, what: string): Date {
  if (typeof value !== 'string' || !RFC3339.test(value))
    throw new Error(`${what}: ${JSON.stringify(value)} is not RFC 3339 with a fraction`);
  const parsed = new Date(value);
  expect(Number.isNaN(parsed.getTime())).toBe(false);
  return parsed;
}

/** Checks one value against the (small) OpenAPI schema subset the event documents use. */
function expectMatchesSchema(value: unknown, schema: any, doc: any, what: string): void {
  if (schema.$ref) return expectMatchesSchema(value, doc.components.schemas[schema.$ref.split('/').pop()], doc, what);
  if (schema.enum)
    expect({ what, value, allowed: schema.enum.includes(value) }).toEqual({ what, value, allowed: true });
  switch (schema.type) {
    case 'integer':
      expect({ what, integer: Number.isInteger(value) }).toEqual({ what, integer: true });
      break;
    case 'string':
      expect({ what, type: typeof value }).toEqual({ what, type: 'string' });
      if (schema.format === 'date-time') expectRfc3339(value, what);
      break;
    case 'boolean':
      expect({ what, type: typeof value }).toEqual({ what, type: 'boolean' });
      break;
    case 'array':
      expect({ what, array: Array.isArray(value) }).toEqual({ what, array: true });
      (value as unknown[]).forEach((item, i) => expectMatchesSchema(item, schema.items, doc, `${what}[${i}]`));
      break;
    case 'object':
    default: {
      expect(schema.properties).toBeDefined();
      expect({ what, keys: Object.keys(value as object).sort() }).toEqual({
        what,
        keys: Object.keys(schema.properties).sort(),
      });
      for (const [key, sub] of Object.entries(schema.properties))
        expectMatchesSchema((value as any)[key], sub, doc, `${what}.${key}`);
    }
  }
}

describe('a webhook receiver subscribed to every event reads typed Messages', () => {
  const t = useService({ receiver: true });
  let secret: string;
  let doc: any;

  beforeAll(async () => {
    const hook = await createWebhook(t.portal, {
      Name: 'receiver',
      URL: t.sink.url('/events'),
      Events: [...EMITTED_EVENTS],
    });
    secret = hook.Secret;
    doc = (await t.http.get('/docs-json')).body;
  });

  it('delivers every emitted event with the documented keys and types, integers as integers and times as RFC 3339', async () => {
    const app = await createApp(t.portal, {
      Name: 'Receiver app',
      Description: 'typed',
      RedirectURLs: 'https://r.example/cb',
      UserID: 42,
      Visibility: 'team',
    });
    const token = await createAccessRequest(t.portal, {
      AppID: app.ID,
      Products: ['weather-api', 'maps-api'],
      ProductIDs: [101, 102],
      PlanID: 7,
    });
    const approved = await t.portal.put(`/portal-api/access_requests/${token.ID}/approve`);
    expect(approved.status).toBe(200);
    const rejected = await t.portal.put(`/portal-api/access_requests/${token.ID}/reject`);
    expect(rejected.status).toBe(200);
    const oauth = await createAccessRequest(t.portal, {
      AppID: app.ID,
      AuthType: 'oauth2.0',
      ProvisionImmediately: true,
      Products: ['maps-api'],
    });
    expect(oauth.Status).toBe('approved');

    // ApplicationRegistered; Created, Approved, CredentialRegistered, Rejected (token); Created, Approved,
    // CredentialRegistered (oauth)
    // delivery is at least once: a receiver dedupes by webhook-id, and so does this one
    const distinct = (all: typeof t.sink.received) => [
      ...new Map(all.map((r) => [r.headers['webhook-id'], r])).values(),
    ];
    const received = distinct(
      await t.sink.waitFor((all) => distinct(all).length >= 8, 30_000, '8 distinct deliveries'),
    );
    const wh = new Webhook(secret);
    const bodies = received.map((r) => wh.verify(r.body, r.headers as Record<string, string>) as Delivered);
    expect(bodies.map((b) => b.Event).sort()).toEqual(
      [
        'ApplicationRegistered',
        'AccessRequestCreated',
        'AccessRequestApproved',
        'CredentialRegistered',
        'AccessRequestRejected',
        'AccessRequestCreated',
        'AccessRequestApproved',
        'CredentialRegistered',
      ].sort(),
    );
    const of = (event: string, pick: (m: Record<string, any>) => boolean = () => true) => {
      const found = bodies.filter((b) => b.Event === event && pick(b.Message));
      expect({ event, count: found.length }).toEqual({ event, count: 1 });
      return found[0];
    };

    // the envelope, and each Message against its schema in /docs-json
    for (const body of bodies) {
      expect(Object.keys(body).sort()).toEqual(['Event', 'Message', 'Timestamp']);
      expectRfc3339(body.Timestamp, `${body.Event}.Timestamp`);
      const callback = doc.paths['/portal-api/webhooks'].post.callbacks[body.Event];
      const schemaRef = callback['{$request.body#/URL}'].post.requestBody.content['application/json'].schema;
      expectMatchesSchema(body, schemaRef, doc, body.Event);
    }

    const [times] = await t.db.query(`SELECT created_at FROM portal_apps WHERE id = $1`, [app.ID]);
    expect(of('ApplicationRegistered').Message).toEqual({
      ID: app.ID,
      Name: 'Receiver app',
      UserID: 42,
      CreatedAt: times.created_at.toISOString(),
      Description: 'typed',
      RedirectURLs: 'https://r.example/cb',
      Visibility: 'team',
    });

    const rows: { id: number; created_at: Date; updated_at: Date }[] = await t.db.query(
      `SELECT id, created_at, updated_at FROM portal_access_requests WHERE id = ANY($1) ORDER BY id`,
      [[token.ID, oauth.ID]],
    );
    const tokenRow = rows.find((r) => r.id === token.ID)!;
    const tokenBase = {
      ID: token.ID,
      AppID: app.ID,
      ByUser: 42,
      ProductIDs: [101, 102],
      PlanID: 7,
      CreatedAt: tokenRow.created_at.toISOString(),
      UserID: 42,
      Catalogue: 'Public catalogue',
      Client: 'Receiver app',
      Plan: 'Free plan',
      Products: ['weather-api', 'maps-api'],
      AuthType: 'authToken',
    };
    const isToken = (m: Record<string, any>) => m.ID === token.ID;
    const created = of('AccessRequestCreated', isToken).Message;
    expect(created).toEqual({ ...tokenBase, Status: 'pending', UpdatedAt: tokenRow.created_at.toISOString() });
    const approvedMessage = of('AccessRequestApproved', isToken).Message;
    expect(approvedMessage).toEqual({ ...tokenBase, Status: 'approved', UpdatedAt: expect.stringMatching(RFC3339) });
    expect(of('AccessRequestRejected', isToken).Message).toEqual({
      ...tokenBase,
      Status: 'rejected',
      UpdatedAt: tokenRow.updated_at.toISOString(),
    });
    // what the routes showed to the minute, the events carry to the millisecond
    expect((approvedMessage.UpdatedAt as string).slice(0, 16).replace('T', ' ')).toBe(approved.body.UpdatedAt);
    expect((created.CreatedAt as string).slice(0, 16).replace('T', ' ')).toBe(token.CreatedAt);

    const oauthRow = rows.find((r) => r.id === oauth.ID)!;
    const isOauth = (m: Record<string, any>) => m.ID === oauth.ID;
    const oauthBase = {
      ID: oauth.ID,
      AppID: app.ID,
      ByUser: 42,
      ProductIDs: [],
      PlanID: 0,
      CreatedAt: oauthRow.created_at.toISOString(),
      UserID: 42,
      Catalogue: 'Public catalogue',
      Client: 'Receiver app',
      Plan: 'Free plan',
      Products: ['maps-api'],
      AuthType: 'oauth2.0',
    };
    // provisioned at once: created approved, never pending
    expect(of('AccessRequestCreated', isOauth).Message).toEqual({
      ...oauthBase,
      Status: 'approved',
      UpdatedAt: oauthRow.created_at.toISOString(),
    });
    expect(of('AccessRequestApproved', isOauth).Message).toEqual({
      ...oauthBase,
      Status: 'approved',
      UpdatedAt: oauthRow.updated_at.toISOString(),
    });

    const credentials: { id: number; access_request_id: number; created_at: Date; oauth_client_id: string }[] =
      await t.db.query(
        `SELECT id, access_request_id, created_at, oauth_client_id FROM portal_credentials WHERE access_request_id = ANY($1)`,
        [[token.ID, oauth.ID]],
      );
    expect(credentials).toHaveLength(2);
    for (const c of credentials) {
      const ar = c.access_request_id === token.ID ? token : oauth;
      expect(of('CredentialRegistered', (m) => m.AccessRequestID === ar.ID).Message).toEqual({
        ID: c.id,
        ByUser: 42,
        AccessRequestID: ar.ID,
        AppID: app.ID,
        CreatedAt: c.created_at.toISOString(),
        UserID: 42,
        AuthType: ar.AuthType,
        OAuthClientID: c.oauth_client_id,
      });
    }
    expect(credentials.find((c) => c.access_request_id === oauth.ID)!.oauth_client_id).toMatch(/^[0-9a-f]{32}$/);

    // no secret in any delivered body
    const everything = received.map((r) => r.body).join('\n');
    expect(everything).not.toContain(approved.body.Credentials[0].Credential);
    expect(everything).not.toContain(oauth.Credentials[0].OAuthClientSecret);
  });

  it('documents each event body {Event, Message, Timestamp} as a callback of the webhook subscription', () => {
    const callbacks = doc.paths['/portal-api/webhooks'].post.callbacks;
    expect(Object.keys(callbacks).sort()).toEqual([...EMITTED_EVENTS].sort());
    for (const event of EMITTED_EVENTS) {
      const op = callbacks[event]['{$request.body#/URL}'].post;
      expect(op.requestBody.content['application/json'].schema).toEqual({ $ref: `#/components/schemas/${event}Event` });
      const envelope = doc.components.schemas[`${event}Event`];
      expect(envelope.required.sort()).toEqual(['Event', 'Message', 'Timestamp']);
      expect(envelope.properties.Event).toMatchObject({ type: 'string', enum: [event] });
      expect(envelope.properties.Timestamp).toMatchObject({ type: 'string', format: 'date-time' });
      const message = doc.components.schemas[envelope.properties.Message.$ref.split('/').pop()];
      expect(message.type).toBe('object');
    }
    const message = (event: string) =>
      doc.components.schemas[doc.components.schemas[`${event}Event`].properties.Message.$ref.split('/').pop()];
    expect(Object.keys(message('AccessRequestApproved').properties)).toEqual([
      'ID',
      'AppID',
      'ByUser',
      'Status',
      'ProductIDs',
      'PlanID',
      'CreatedAt',
      'UpdatedAt',
      'UserID',
      'Catalogue',
      'Client',
      'Plan',
      'Products',
      'AuthType',
    ]);
    expect(message('AccessRequestApproved').properties.ProductIDs).toMatchObject({
      type: 'array',
      items: { type: 'integer' },
    });
    expect(Object.keys(message('ApplicationRegistered').properties)).toEqual([
      'ID',
      'Name',
      'UserID',
      'CreatedAt',
      'Description',
      'RedirectURLs',
      'Visibility',
    ]);
    expect(Object.keys(message('CredentialRegistered').properties)).toEqual([
      'ID',
      'ByUser',
      'AccessRequestID',
      'AppID',
      'CreatedAt',
      'UserID',
      'AuthType',
      'OAuthClientID',
    ]);
  });
});
