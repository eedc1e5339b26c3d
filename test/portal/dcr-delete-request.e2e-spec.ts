import { Client } from 'pg';
import { eventually } from '../helpers/eventually';
import { createAccessRequest, createApp } from '../helpers/portal';
import { expectKeptAndLogged } from '../helpers/fake-idp';
import { withLogs } from '../helpers/logs';
import { useService } from '../helpers/use-service';
import { sessionsWaitingForLocks } from '../helpers/locks';

const PROVIDER_TIMEOUT_MS = 5000;

/**
 * DELETE /portal-api/access_requests/{id} withdraws, once the delete has committed, every client the identity
 * provider registered for the request by DCR (RFC 7592, with its registration access token), as an approval that
 * does not commit withdraws its own; so does DELETE /portal-api/apps/{id} for every request of the app. The
 * provider is a fake on 127.0.0.1.
 */
describe('deleting an access request, or its app, withdraws its DCR clients at the provider', () => {
  const t = useService({
    idp: { timeoutMs: PROVIDER_TIMEOUT_MS },
    portalApp: { Name: 'Registered app', RedirectURLs: 'https://a.example/cb', UserID: 7 },
  });

  /** An approved DCR request and what the provider answered its registration with. */
  async function approvedDcrRequest(
    appId = t.portalApp.ID,
  ): Promise<{ id: number; registration: Record<string, string> }> {
    const ar = await createAccessRequest(t.portal, {
      AppID: appId,
      AuthType: 'oauth2.0',
      DCREnabled: true,
      Products: ['weather-api'],
    });
    const before = t.idp.registrations.length;
    expect((await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`)).status).toBe(200);
    return { id: ar.ID, registration: JSON.parse(t.idp.registrations[before].reply) };
  }

  const requestRows = async (id: number) =>
    (
      await t.db.query(
        `SELECT (SELECT count(*)::int FROM portal_access_requests WHERE id = $1) AS requests,
                (SELECT count(*)::int FROM portal_credentials WHERE access_request_id = $1) AS credentials`,
        [id],
      )
    )[0];

  it('deletes the client at its registration_client_uri with its registration access token, once the delete has committed', async () => {
    const { id, registration } = await approvedDcrRequest();
    expect(t.idp.has(registration.client_id)).toBe(true);
    // what the database holds when the provider is asked: the delete has committed
    let atDeletion: unknown;
    t.idp.beforeDelete = async () => {
      atDeletion = await requestRows(id);
    };
    const before = t.idp.deletions.length;
    const { result: res, log } = await withLogs(() => t.portal.delete(`/portal-api/access_requests/${id}`));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', message: 'Access request deleted' });
    // the fake provider accepts a deletion only at the client's own URI with its own registration access token
    expect(t.idp.deletions.slice(before)).toEqual([{ clientId: registration.client_id, authorized: true }]);
    expect(registration.registration_client_uri).toBe(`${t.idp.url}/${registration.client_id}`);
    expect(t.idp.has(registration.client_id)).toBe(false);
    expect(atDeletion).toEqual({ requests: 0, credentials: 0 });
    expect((await t.portal.get(`/portal-api/access_requests/${id}`)).status).toBe(404);
    // logged by client id, never with the token or the secret
    expect(log).toContain('dynamic client registration withdrawn');
    expect(log).toContain(registration.client_id);
    expect(log).not.toContain(registration.registration_access_token);
    expect(log).not.toContain(registration.client_secret);
  });

  it('withdraws the client of a revoked credential too (approved, then rejected): nobody could after the delete', async () => {
    const { id, registration } = await approvedDcrRequest();
    expect((await t.portal.put(`/portal-api/access_requests/${id}/reject`)).status).toBe(200);
    expect(t.idp.has(registration.client_id)).toBe(true);
    expect((await t.portal.delete(`/portal-api/access_requests/${id}`)).status).toBe(200);
    expect(t.idp.has(registration.client_id)).toBe(false);
    expect(t.idp.deletions.at(-1)).toEqual({ clientId: registration.client_id, authorized: true });
  });

  it('deletes the request even when the provider does not answer, and logs the client left there (without the token)', async () => {
    const { id, registration } = await approvedDcrRequest();
    const dcr = t.dcr;
    t.idp.mode = 'hang';
    dcr.timeoutMs = 300;
    let res;
    let log: string;
    try {
      ({ result: res, log } = await withLogs(() => t.portal.delete(`/portal-api/access_requests/${id}`)));
    } finally {
      dcr.timeoutMs = PROVIDER_TIMEOUT_MS;
    }
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', message: 'Access request deleted' });
    expect(await requestRows(id)).toEqual({ requests: 0, credentials: 0 });
    expectKeptAndLogged(t.idp, registration, log, 300);
  });

  it('deletes the request when the provider refuses the deletion (the client already gone there)', async () => {
    const { id, registration } = await approvedDcrRequest();
    // someone removed the client at the provider first: it now answers 401 for it
    const removed = await fetch(registration.registration_client_uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${registration.registration_access_token}` },
    });
    expect(removed.status).toBe(204);
    const { result: res, log } = await withLogs(() => t.portal.delete(`/portal-api/access_requests/${id}`));
    expect(res.status).toBe(200);
    expect(await requestRows(id)).toEqual({ requests: 0, credentials: 0 });
    expect(log).toContain('the identity provider answered HTTP 401');
  });

  it('deleting an app withdraws the clients of all its requests (revoked ones too), once the delete has committed', async () => {
    const other = await createApp(t.portal, { Name: 'Doomed app', RedirectURLs: 'https://d.example/cb', UserID: 8 });
    const first = await approvedDcrRequest(other.ID);
    const second = await approvedDcrRequest(other.ID);
    expect((await t.portal.put(`/portal-api/access_requests/${second.id}/reject`)).status).toBe(200);
    const plain = await createAccessRequest(t.portal, { AppID: other.ID, AuthType: 'oauth2.0', DCREnabled: false });
    expect((await t.portal.put(`/portal-api/access_requests/${plain.ID}/approve`)).status).toBe(200);
    // the app of the other tests keeps its client
    const kept = await approvedDcrRequest();
    const seen: unknown[] = [];
    t.idp.beforeDelete = async () => {
      seen.push(await requestRows(first.id));
    };
    const before = t.idp.deletions.length;
    const { result: res, log } = await withLogs(() => t.portal.delete(`/portal-api/apps/${other.ID}`));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', message: 'Application deleted' });
    const ids = [first.registration.client_id, second.registration.client_id];
    expect(t.idp.deletions.slice(before).sort((a, b) => a.clientId.localeCompare(b.clientId))).toEqual(
      ids.sort().map((clientId) => ({ clientId, authorized: true })),
    );
    for (const id of ids) expect(t.idp.has(id)).toBe(false);
    expect(t.idp.has(kept.registration.client_id)).toBe(true);
    expect(seen).toEqual([
      { requests: 0, credentials: 0 },
      { requests: 0, credentials: 0 },
    ]);
    expect(log).toContain('its application was deleted');
    expect(log).not.toContain(first.registration.registration_access_token);
    expect((await t.portal.get(`/portal-api/apps/${other.ID}`)).status).toBe(404);
  });

  it('deleting an app withdraws the client of an approval that commits while the delete waits for its request', async () => {
    const app = await createApp(t.portal, { Name: 'Raced app', RedirectURLs: 'https://r.example/cb', UserID: 11 });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID, AuthType: 'oauth2.0', DCREnabled: true });
    const registrationsBefore = t.idp.registrations.length;
    const waiting = () => sessionsWaitingForLocks(t.db);
    // the request is held, so the approval (registered already) waits to commit, and the delete of the app behind it
    const holder = new Client({ connectionString: t.env.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM portal_access_requests WHERE id = $1 FOR UPDATE`, [ar.ID]);
      const approval = t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
      await eventually(async () => (await waiting()) === 1, 10_000, 'the approval to wait for the request');
      const deletion = t.portal.delete(`/portal-api/apps/${app.ID}`);
      await eventually(async () => (await waiting()) === 2, 10_000, 'the delete to wait for the request');
      await holder.query('COMMIT');
      const [approved, deleted] = await Promise.all([approval, deletion]);
      expect(approved.status).toBe(200);
      expect(approved.body.Status).toBe('approved');
      expect(deleted.status).toBe(200);
    } finally {
      await holder.end();
    }
    // the approval committed first: the delete took its credential with it, so it withdraws its client too
    const registered = t.idp.registrations.slice(registrationsBefore).map((r) => JSON.parse(r.reply).client_id);
    expect(registered).toHaveLength(1);
    expect(t.idp.deletions).toContainEqual({ clientId: registered[0], authorized: true });
    expect(t.idp.has(registered[0])).toBe(false);
    expect(await requestRows(ar.ID)).toEqual({ requests: 0, credentials: 0 });
  });

  it('deletes an app whose provider does not answer, and asks nothing for an app without registered clients', async () => {
    const hung = await createApp(t.portal, { Name: 'Hung app', RedirectURLs: 'https://h.example/cb', UserID: 9 });
    const { registration } = await approvedDcrRequest(hung.ID);
    const dcr = t.dcr;
    t.idp.mode = 'hang';
    dcr.timeoutMs = 300;
    try {
      expect((await t.portal.delete(`/portal-api/apps/${hung.ID}`)).status).toBe(200);
    } finally {
      dcr.timeoutMs = PROVIDER_TIMEOUT_MS;
    }
    expect(t.idp.has(registration.client_id)).toBe(true);
    t.idp.mode = 'ok';
    const bare = await createApp(t.portal, { Name: 'Bare app', RedirectURLs: 'https://b.example/cb', UserID: 10 });
    const before = t.idp.deletions.length;
    expect((await t.portal.delete(`/portal-api/apps/${bare.ID}`)).status).toBe(200);
    expect((await t.portal.delete(`/portal-api/apps/${bare.ID}`)).status).toBe(404);
    expect(t.idp.deletions.length).toBe(before);
  });

  it('asks the provider nothing for a request without a registered client, nor for one that does not exist', async () => {
    const before = t.idp.deletions.length;
    const plain = await createAccessRequest(t.portal, {
      AppID: t.portalApp.ID,
      AuthType: 'oauth2.0',
      DCREnabled: false,
    });
    expect((await t.portal.put(`/portal-api/access_requests/${plain.ID}/approve`)).status).toBe(200);
    expect((await t.portal.delete(`/portal-api/access_requests/${plain.ID}`)).status).toBe(200);
    const pendingDcr = await createAccessRequest(t.portal, {
      AppID: t.portalApp.ID,
      AuthType: 'oauth2.0',
      DCREnabled: true,
    });
    expect((await t.portal.delete(`/portal-api/access_requests/${pendingDcr.ID}`)).status).toBe(200);
    const missing = await t.portal.delete(`/portal-api/access_requests/${plain.ID}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ status: 'error', errors: ['Access request not found'] });
    expect(t.idp.deletions.length).toBe(before);
  });
});
