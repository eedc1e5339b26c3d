import {
  accessRequestBody,
  accessRequestTally,
  createAccessRequest,
  credentialCount,
  outboxRows,
  PROVISIONED_WITH_DCR,
} from '../helpers/portal';
import { useService } from '../helpers/use-service';

const INITIAL_ACCESS_TOKEN = 'initial-access-token-0123456789';

describe('portal access requests with dynamic client registration (RFC 7591)', () => {
  const t = useService({
    idp: { initialAccessToken: INITIAL_ACCESS_TOKEN, timeoutMs: 500 },
    portalApp: { Name: 'Partner app', RedirectURLs: 'https://a.example/cb,https://b.example/cb', UserID: 5 },
  });

  const dcrRequest = () =>
    createAccessRequest(t.portal, {
      AppID: t.portalApp.ID,
      AuthType: 'oauth2.0',
      DCREnabled: true,
      Products: ['weather-api', 'maps-api'],
    });

  /** Nothing happened to `id`: still pending, no credential, no approval or credential event. */
  async function expectUntouched(ar: any): Promise<void> {
    const now = await t.portal.get(`/portal-api/access_requests/${ar.ID}`);
    expect(now.body).toEqual(ar);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(0);
    expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(0);
    expect(await credentialCount(t, ar.ID)).toBe(0);
  }

  it('registers the client at the identity provider on approval and keeps its reply', async () => {
    t.idp.secretExpiresAt = Date.UTC(2030, 0, 2, 3, 4, 0) / 1000;
    const ar = await dcrRequest();
    const before = t.idp.registrations.length;
    const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(res.status).toBe(200);
    expect(t.idp.registrations).toHaveLength(before + 1);

    const sent = t.idp.registrations[before];
    expect(sent.headers.authorization).toBe(`Bearer ${INITIAL_ACCESS_TOKEN}`);
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toEqual({
      client_name: 'Partner app',
      redirect_uris: ['https://a.example/cb', 'https://b.example/cb'],
      grant_types: ['authorization_code', 'client_credentials'],
      response_types: ['code'],
      scope: 'weather-api maps-api',
      token_endpoint_auth_method: 'client_secret_basic',
    });

    const reply = JSON.parse(sent.reply);
    expect(res.body.Status).toBe('approved');
    expect(res.body.Credentials).toEqual([
      {
        AccessRequest: `AccessRequest#${ar.ID}`,
        Credential: '',
        CredentialHash: '',
        DCRRegistrationAccessToken: reply.registration_access_token,
        DCRRegistrationClientURI: reply.registration_client_uri,
        DCRResponse: sent.reply,
        Expires: '2030-01-02 03:04',
        OAuthClientID: reply.client_id,
        OAuthClientSecret: reply.client_secret,
        RedirectURI: 'https://a.example/cb,https://b.example/cb',
        ResponseType: 'code',
        Scope: 'weather-api maps-api',
        TokenEndpoints: 'client_secret_basic',
      },
    ]);
    expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body).toEqual(res.body);

    const events = await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID);
    expect(events).toHaveLength(1);
    const [{ id: credentialId, created_at: issuedAt }] = await t.db.query(
      `SELECT id, created_at FROM portal_credentials WHERE access_request_id = $1`,
      [ar.ID],
    );
    expect(events[0].payload).toEqual({
      ID: credentialId,
      ByUser: 5,
      AccessRequestID: ar.ID,
      AppID: t.portalApp.ID,
      CreatedAt: issuedAt.toISOString(),
      UserID: 5,
      AuthType: 'oauth2.0',
      OAuthClientID: reply.client_id,
    });
    const everyEvent = (await t.db.query(`SELECT payload::text AS p FROM outbox_events`))
      .map((r: { p: string }) => r.p)
      .join('\n');
    expect(everyEvent).not.toContain(reply.client_secret);
    expect(everyEvent).not.toContain(reply.registration_access_token);
  });

  it('keeps the client secret, the registration token and the reply encrypted at rest', async () => {
    const ar = await dcrRequest();
    const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(res.status).toBe(200);
    const [credential] = res.body.Credentials;
    const [row] = await t.db.query(
      `SELECT row_to_json(c)::text AS row, oauth_client_secret_encrypted, dcr_registration_access_token_encrypted, dcr_response_encrypted
         FROM portal_credentials c WHERE access_request_id = $1`,
      [ar.ID],
    );
    expect(row.row).toContain(credential.OAuthClientID);
    expect(row.row).not.toContain(credential.OAuthClientSecret);
    expect(row.row).not.toContain(credential.DCRRegistrationAccessToken);
    for (const sealed of [
      row.oauth_client_secret_encrypted,
      row.dcr_registration_access_token_encrypted,
      row.dcr_response_encrypted,
    ]) {
      expect(sealed).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
    }
    expect(row.dcr_response_encrypted).not.toContain('client_id');
  });

  it.each([
    { provider: 'a provider answering 500', mode: 'fail', reason: 'the identity provider answered HTTP 500' },
    {
      provider: 'a reply without client_id',
      mode: 'no-client-id',
      reason: 'the identity provider answered without a client_id',
    },
  ] as const)(
    '$provider fails the approval with 502 and leaves nothing (no event either)',
    async ({ mode, reason }) => {
      const ar = await dcrRequest();
      t.idp.mode = mode;
      const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ status: 'error', errors: [`dynamic client registration failed: ${reason}`] });
      await expectUntouched(ar);
    },
  );

  it('a provider that never answers fails the approval with 502 once the timeout passes, and leaves nothing', async () => {
    const ar = await dcrRequest();
    t.idp.mode = 'hang';
    const started = Date.now();
    const res = await t.portal.patch(`/portal-api/access_requests/${ar.ID}`, { Status: 'approved' });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      status: 'error',
      errors: ['dynamic client registration failed: the identity provider did not answer within 500 ms'],
    });
    expect(Date.now() - started).toBeLessThan(5000);
    await expectUntouched(ar);

    // the row lock is gone with the rolled-back transaction: a later approval goes through
    t.idp.mode = 'ok';
    const retry = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(retry.status).toBe(200);
    expect(retry.body.Status).toBe('approved');
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(1);
  });

  it.each([
    [
      'a scope holding NUL',
      { scope: 'weather-api\u0000' },
      'the identity provider answered a scope that cannot be stored',
    ],
    [
      'a registration_client_uri holding a lone surrogate',
      { registration_client_uri: 'https://idp.example/c\ud800' },
      'the identity provider answered a registration_client_uri that cannot be stored',
    ],
    [
      'a client_secret_expires_at past the year 9999',
      { client_secret_expires_at: 1e20 },
      'the identity provider answered a client_secret_expires_at after 9999-12-31 (253402300799)',
    ],
  ])('a reply with %s fails the approval with 502, leaves nothing and withdraws the client', async (_, reply, why) => {
    const ar = await dcrRequest();
    t.idp.replyWith = reply;
    const before = t.idp.registrations.length;
    const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ status: 'error', errors: [`dynamic client registration failed: ${why}`] });
    await expectUntouched(ar);
    const registered = JSON.parse(t.idp.registrations[before].reply);
    // a client_uri the reply garbled cannot be reached; every other one is deleted again
    expect(t.idp.has(registered.client_id)).toBe('registration_client_uri' in reply);
  });

  it('ProvisionImmediately with a failing provider creates nothing and emits nothing', async () => {
    t.idp.mode = 'fail';
    const before = await accessRequestTally(t, 'AccessRequest%');
    const res = await t.portal.post(
      '/portal-api/access_requests',
      accessRequestBody({ AppID: t.portalApp.ID, ...PROVISIONED_WITH_DCR }),
    );
    expect(res.status).toBe(502);
    expect(await accessRequestTally(t, 'AccessRequest%')).toEqual(before);
  });

  it('racing approvals make one transition; the registration of the one that lost is deleted at the provider again', async () => {
    const ar = await dcrRequest();
    const before = t.idp.registrations.length;
    const deletionsBefore = t.idp.deletions.length;
    // both approvals have registered before either answer arrives, so both reach the transaction
    let arrived = 0;
    let release!: () => void;
    const bothArrived = new Promise<void>((resolve) => (release = resolve));
    t.idp.beforeReply = async () => {
      if (++arrived === 2) release();
      await bothArrived;
    };
    const results = await Promise.all([
      t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`),
      t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`),
    ]);
    t.idp.beforeReply = null;
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(results[0].body).toEqual(results[1].body);
    expect(t.idp.registrations).toHaveLength(before + 2);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(1);
    expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(1);

    const kept = results[0].body.Credentials[0].OAuthClientID;
    const registered = t.idp.registrations.slice(before).map((r) => JSON.parse(r.reply).client_id);
    const loser = registered.find((id) => id !== kept);
    expect(registered).toContain(kept);
    expect(t.idp.has(kept)).toBe(true);
    expect(t.idp.has(loser)).toBe(false);
    expect(t.idp.deletions.slice(deletionsBefore)).toEqual([{ clientId: loser, authorized: true }]);
  });
});
