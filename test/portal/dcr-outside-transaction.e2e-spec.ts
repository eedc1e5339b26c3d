import { accessRequestBody, createAccessRequest, createApp, outboxRows, PROVISIONED_WITH_DCR } from '../helpers/portal';
import { expectKeptAndLogged } from '../helpers/fake-idp';
import { withLogs } from '../helpers/logs';
import { useService } from '../helpers/use-service';

/** How long the service waits on the provider in these specs. */
const PROVIDER_TIMEOUT_MS = 6000;
/**
 * Far below the provider's time limit: a read that waited for a connection held by a hanging approval would miss it.
 */
const READ_BOUND_MS = 2000;
const APPROVALS = 50;

/**
 * Dynamic client registration happens before the approval's transaction: while the identity provider is
 * called, no row lock and no pooled connection is held, and a registration whose approval is not committed
 * is deleted at the provider again (RFC 7592). Everything over HTTP against real Postgres and Redis; the
 * provider is a fake on 127.0.0.1 whose hook changes the database while the service waits on it.
 */
describe('DCR registration outside the approval transaction', () => {
  const t = useService({
    idp: { timeoutMs: PROVIDER_TIMEOUT_MS },
    portalApp: { Name: 'Registered app', RedirectURLs: 'https://a.example/cb', UserID: 7 },
  });

  const dcrRequest = (appId = t.portalApp.ID) =>
    createAccessRequest(t.portal, { AppID: appId, AuthType: 'oauth2.0', DCREnabled: true, Products: ['weather-api'] });
  const clientIdOf = (registration: { reply: string }) => JSON.parse(registration.reply).client_id as string;

  /** Still pending, no credential row, no approval or credential event. */
  async function expectPendingAndBare(id: number): Promise<void> {
    const [row] = await t.db.query(
      `SELECT ar.status, (SELECT count(*)::int FROM portal_credentials c WHERE c.access_request_id = ar.id) AS credentials
         FROM portal_access_requests ar WHERE ar.id = $1`,
      [id],
    );
    expect(row).toEqual({ status: 'pending', credentials: 0 });
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', id)).toHaveLength(0);
    expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', id)).toHaveLength(0);
  }

  it(`${APPROVALS} approvals waiting on a hanging provider hold no connection: other routes keep answering, and each approval ends in 502 with the request still pending`, async () => {
    const waiting = [];
    for (let i = 0; i < APPROVALS; i++) waiting.push(await dcrRequest());
    const other = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
    const plain = await createAccessRequest(t.portal, { AppID: t.portalApp.ID });
    const registrationsBefore = t.idp.registrations.length;

    t.idp.mode = 'hang';
    let settled = 0;
    const approvals = waiting.map((ar) =>
      t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`).then((res) => {
        settled++;
        return res;
      }),
    );
    // every approval is at the provider (more than the pool has connections) before the reads begin
    const arrivedBy = Date.now() + PROVIDER_TIMEOUT_MS / 2;
    while (t.idp.registrations.length < registrationsBefore + APPROVALS && Date.now() < arrivedBy)
      await new Promise((r) => setTimeout(r, 20));
    expect(t.idp.registrations.length - registrationsBefore).toBe(APPROVALS);

    const timings: number[] = [];
    const timed = async (call: () => Promise<{ status: number; body: any }>) => {
      const started = Date.now();
      const res = await call();
      timings.push(Date.now() - started);
      return res;
    };
    for (let round = 0; round < 5; round++) {
      const one = await timed(() => t.portal.get(`/portal-api/access_requests/${other.ID}`));
      expect(one.status).toBe(200);
      expect(one.body.ID).toBe(other.ID);
      const apps = await timed(() => t.portal.get('/portal-api/apps'));
      expect(apps.status).toBe(200);
    }
    // a write beside them too: an approval without DCR goes through its transaction at once
    const approved = await timed(() => t.portal.put(`/portal-api/access_requests/${plain.ID}/approve`));
    expect(approved.status).toBe(200);
    expect(approved.body.Status).toBe('approved');

    expect(settled).toBe(0); // all of the above happened while every DCR approval was still waiting
    expect(Math.max(...timings)).toBeLessThan(READ_BOUND_MS);

    const answers = await Promise.all(approvals);
    for (const res of answers) {
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        status: 'error',
        errors: [
          `dynamic client registration failed: the identity provider did not answer within ${PROVIDER_TIMEOUT_MS} ms`,
        ],
      });
    }
    const [{ pending }] = await t.db.query(
      `SELECT count(*)::int AS pending FROM portal_access_requests WHERE id = ANY($1) AND status = 'pending'`,
      [waiting.map((ar) => ar.ID)],
    );
    expect(pending).toBe(APPROVALS);
    const [{ credentials }] = await t.db.query(
      `SELECT count(*)::int AS credentials FROM portal_credentials WHERE access_request_id = ANY($1)`,
      [waiting.map((ar) => ar.ID)],
    );
    expect(credentials).toBe(0);
  }, 60_000);

  it('a transaction that fails at COMMIT after the registration deletes the registration at the provider, and the request stays pending', async () => {
    const ar = await dcrRequest();
    // a deferred constraint trigger refuses this request's credential at COMMIT: a real commit failure
    await t.db.query(
      `CREATE FUNCTION refuse_commit_for_spec() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$`,
    );
    await t.db.query(
      `CREATE CONSTRAINT TRIGGER refuse_commit AFTER INSERT ON portal_credentials DEFERRABLE INITIALLY DEFERRED
         FOR EACH ROW WHEN (NEW.access_request_id = ${Number(ar.ID)}) EXECUTE FUNCTION refuse_commit_for_spec()`,
    );
    const before = t.idp.registrations.length;
    let res, log;
    try {
      ({ result: res, log } = await withLogs(() => t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`)));
    } finally {
      await t.db.query(`DROP TRIGGER refuse_commit ON portal_credentials`);
      await t.db.query(`DROP FUNCTION refuse_commit_for_spec()`);
    }
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ status: 'error', errors: ['Internal server error'] });

    expect(t.idp.registrations).toHaveLength(before + 1);
    const registration = JSON.parse(t.idp.registrations[before].reply);
    expect(t.idp.has(registration.client_id)).toBe(false);
    expect(t.idp.deletions.at(-1)).toEqual({ clientId: registration.client_id, authorized: true });
    await expectPendingAndBare(ar.ID);

    // the withdrawal is logged by client id, never with the token or the secret
    expect(log).toContain(registration.client_id);
    expect(log).toContain('dynamic client registration withdrawn');
    expect(log).not.toContain(registration.registration_access_token);
    expect(log).not.toContain(registration.client_secret);

    // nothing is left behind: the next approval registers afresh and goes through
    const retry = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(retry.status).toBe(200);
    expect(retry.body.Credentials[0].OAuthClientID).toBe(clientIdOf(t.idp.registrations.at(-1)!));
  });

  it('a request deleted while the provider registers answers 404, and the registration is deleted again', async () => {
    const ar = await dcrRequest();
    t.idp.beforeReply = async () => {
      await t.db.query(`DELETE FROM portal_access_requests WHERE id = $1`, [ar.ID]);
    };
    const before = t.idp.registrations.length;
    const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: 'error', errors: ['Access request not found'] });
    const clientId = clientIdOf(t.idp.registrations[before]);
    expect(t.idp.has(clientId)).toBe(false);
    expect(t.idp.deletions.at(-1)).toEqual({ clientId, authorized: true });
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(0);
    expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(0);
  });

  it('a withdrawal the provider does not answer still lets the approval answer, and is logged as left to do (without the token)', async () => {
    const ar = await dcrRequest();
    t.idp.beforeReply = async () => {
      await t.db.query(`DELETE FROM portal_access_requests WHERE id = $1`, [ar.ID]);
      t.idp.mode = 'hang'; // the registration is answered; the deletion that follows is not
      t.dcr.timeoutMs = 300;
    };
    const before = t.idp.registrations.length;
    let res, log;
    try {
      ({ result: res, log } = await withLogs(
        () => t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`),
        ['warn'],
      ));
    } finally {
      t.dcr.timeoutMs = PROVIDER_TIMEOUT_MS;
    }
    expect(res.status).toBe(404);
    const registration = JSON.parse(t.idp.registrations[before].reply);
    expectKeptAndLogged(t.idp, registration, log, 300);
  });

  it('a request rejected while the provider registers stays rejected: the approval answers 409 and the registration is deleted again', async () => {
    const ar = await dcrRequest();
    let rejection: { status: number } | undefined;
    t.idp.beforeReply = async () => {
      rejection = await t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`);
    };
    const before = t.idp.registrations.length;
    const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(rejection?.status).toBe(200);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ status: 'error', errors: ['access request is rejected and cannot become approved'] });
    const clientId = clientIdOf(t.idp.registrations[before]);
    expect(t.idp.has(clientId)).toBe(false);
    expect(t.idp.deletions.at(-1)).toEqual({ clientId, authorized: true });
    expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body).toMatchObject({
      Status: 'rejected',
      Credentials: [],
    });
    expect(await outboxRows(t, 'AccessRequestRejected', 'ID', ar.ID)).toHaveLength(1);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(0);
  });

  describe('ProvisionImmediately with DCR', () => {
    const provisioned = (appId: number) => accessRequestBody({ AppID: appId, ...PROVISIONED_WITH_DCR });

    it('registers before the transaction and keeps the registration it commits', async () => {
      const before = t.idp.registrations.length;
      const deletions = t.idp.deletions.length;
      const res = await t.portal.post('/portal-api/access_requests', provisioned(t.portalApp.ID));
      expect(res.status).toBe(201);
      expect(res.body.Status).toBe('approved');
      const clientId = clientIdOf(t.idp.registrations[before]);
      expect(res.body.Credentials[0].OAuthClientID).toBe(clientId);
      expect(t.idp.has(clientId)).toBe(true);
      expect(t.idp.deletions).toHaveLength(deletions);
    });

    it('an app deleted while the provider registers: 422, nothing created, and the registration is deleted again', async () => {
      const doomed = await createApp(t.portal, { Name: 'Doomed app', RedirectURLs: 'https://d.example/cb' });
      t.idp.beforeReply = async () => {
        await t.db.query(`DELETE FROM portal_apps WHERE id = $1`, [doomed.ID]);
      };
      const before = t.idp.registrations.length;
      const res = await t.portal.post('/portal-api/access_requests', provisioned(doomed.ID));
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ status: 'error', errors: [`AppID: no application with ID ${doomed.ID}`] });
      const clientId = clientIdOf(t.idp.registrations[before]);
      expect(t.idp.has(clientId)).toBe(false);
      expect(t.idp.deletions.at(-1)).toEqual({ clientId, authorized: true });
      const [{ count }] = await t.db.query(
        `SELECT count(*)::int AS count FROM portal_access_requests WHERE app_id = $1`,
        [doomed.ID],
      );
      expect(count).toBe(0);
    });

    it('a failing provider is still a 502 before anything is written, with no deletion to make', async () => {
      t.idp.mode = 'fail';
      const deletions = t.idp.deletions.length;
      const res = await t.portal.post('/portal-api/access_requests', provisioned(t.portalApp.ID));
      expect(res.status).toBe(502);
      expect(t.idp.deletions).toHaveLength(deletions);
    });
  });
});
