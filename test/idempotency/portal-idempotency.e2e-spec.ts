import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Client } from 'pg';
import { request } from 'undici';
import { sha256Hex } from '../../src/common/crypto/secret-box';
import { fingerprintKey, requestFingerprint } from '../../src/common/idempotency/idempotency-key';
import { HttpResponse } from '../helpers/http-client';
import { createAccessRequest, createApp, outboxRows } from '../helpers/portal';
import { startTestApp } from '../helpers/test-app';
import { TEST_SECRETS } from '../helpers/test-env';
import { eventually } from '../helpers/eventually';
import { expectReplayOf, idempotencyKey, refuseStoredAnswers, unstorableKey, withKey } from '../helpers/idempotency';
import { useService } from '../helpers/use-service';
import { sessionsWaitingForLocks } from '../helpers/locks';

const approvePath = (id: number) => `/portal-api/access_requests/${id}/approve`;

/** The portal error body, with every reason a string. */
function expectPortalError(res: HttpResponse, status: number, reason: RegExp): void {
  expect(res.status).toBe(status);
  expect(Object.keys(res.body).sort()).toEqual(['errors', 'status']);
  expect(res.body.status).toBe('error');
  expect(res.body.errors).toEqual([expect.stringMatching(reason)]);
}

/**
 * Idempotency-Key on the portal family, over HTTP against real Postgres and Redis: retries of creations and
 * status changes make one change and get the first answer again; a different request with the key is a 422, a
 * repeat while the first still runs a 409; a lost answer is recovered by the retry; what is not stored (a 5xx, a
 * validation failure) leaves the key free; and the answer is committed in the transaction of the change.
 */
describe('idempotent retries on the portal', () => {
  const t = useService({ idp: true, receiver: true });

  /** A pending access request on an app of its own named `name`; with `dcr`, an oauth2.0 one registered by DCR. */
  const pendingRequest = async (name: string, dcr = false) => {
    const app = await createApp(t.portal, dcr ? { Name: name, RedirectURLs: 'https://a.example/cb' } : { Name: name });
    return createAccessRequest(t.portal, { AppID: app.ID, ...(dcr ? { AuthType: 'oauth2.0', DCREnabled: true } : {}) });
  };
  const appsNamed = async (name: string): Promise<number[]> =>
    (await t.db.query(`SELECT id FROM portal_apps WHERE name = $1 ORDER BY id`, [name])).map((r: any) => r.id);
  const keyRows = async (k: string): Promise<any[]> =>
    t.db.query(`SELECT scope, method, route, status, owner FROM idempotency_keys WHERE key = $1`, [k]);

  it('a retried POST /apps returns the same app, created once, and says it is a replay', async () => {
    const k = idempotencyKey();
    const name = `Retried ${k}`;
    const first = await t.portal.post('/portal-api/apps', { Name: name, UserID: 3 }, withKey(k));
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // the key as a structured-field string is the same key
    const again = await t.portal.post('/portal-api/apps', { UserID: 3, Name: name }, withKey(`"${k}"`));
    expectReplayOf(again, first);
    expect(again.body.ID).toBe(first.body.ID);
    expect(await appsNamed(name)).toEqual([first.body.ID]);
    expect(await outboxRows(t, 'ApplicationRegistered', 'ID', first.body.ID)).toHaveLength(1);
    expect(await keyRows(k)).toEqual([
      { scope: expect.stringMatching(/^portal:/), method: 'POST', route: '/portal-api/apps', status: 200, owner: null },
    ]);
  });

  it('without the header every POST /apps creates an app, as before', async () => {
    const name = `Plain ${idempotencyKey()}`;
    const a = await t.portal.post('/portal-api/apps', { Name: name });
    const b = await t.portal.post('/portal-api/apps', { Name: name });
    expect(a.headers['idempotent-replayed']).toBeUndefined();
    expect(b.body.ID).not.toBe(a.body.ID);
    expect(await appsNamed(name)).toHaveLength(2);
  });

  it('a retried approval replays the first 200, and the approval is made and delivered once', async () => {
    const hook = await t.portal.post('/portal-api/webhooks', {
      Name: 'approvals',
      URL: t.sink.url(),
      Events: ['AccessRequestApproved'],
    });
    expect(hook.status).toBe(201);
    const ar = await pendingRequest('Approved once');
    const k = idempotencyKey();
    const first = await t.portal.put(approvePath(ar.ID), undefined, withKey(k));
    expect(first.status).toBe(200);
    expect(first.body.Status).toBe('approved');
    expect(first.body.Credentials).toHaveLength(1);
    const retry = await t.portal.put(approvePath(ar.ID), undefined, withKey(k));
    expectReplayOf(retry, first);
    // the replay is the first answer, credential included, not a fresh read of the request
    expect(retry.body.Credentials[0].Credential).toBe(first.body.Credentials[0].Credential);
    // kept sealed: the stored answer carries the credential, which the database never holds in clear
    const [stored] = await t.db.query(`SELECT to_jsonb(k)::text AS row FROM idempotency_keys k WHERE key = $1`, [k]);
    expect(stored.row).not.toContain(first.body.Credentials[0].Credential);
    expect(stored.row).not.toContain('approved');

    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(1);
    expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(1);
    const delivered = await t.sink.waitFor(
      (r) => r.some((x) => JSON.parse(x.body).Message?.ID === ar.ID),
      15_000,
      'the approval delivery',
    );
    expect(delivered.filter((x) => JSON.parse(x.body).Message?.ID === ar.ID)).toHaveLength(1);
    const [{ deliveries }] = await t.db.query(
      `SELECT count(*)::int AS deliveries FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id
        WHERE d.webhook_id = $1 AND e.payload->>'ID' = $2`,
      [hook.body.ID, String(ar.ID)],
    );
    expect(deliveries).toBe(1);
  });

  it('the same key with a different body, path or method is a 422 in the portal error body, and changes nothing', async () => {
    const k = idempotencyKey();
    const first = await t.portal.post('/portal-api/apps', { Name: `First ${k}` }, withKey(k));
    expect(first.status).toBe(200);
    const reused = /^Idempotency-Key: this key was already used for a different request/;
    expectPortalError(await t.portal.post('/portal-api/apps', { Name: `Other ${k}` }, withKey(k)), 422, reused);
    expect(await appsNamed(`Other ${k}`)).toEqual([]);

    const a = await createApp(t.portal, { Name: 'A' });
    const b = await createApp(t.portal, { Name: 'B' });
    const k2 = idempotencyKey();
    expect((await t.portal.put(`/portal-api/apps/${a.ID}`, { Description: 'd' }, withKey(k2))).status).toBe(200);
    expectPortalError(await t.portal.put(`/portal-api/apps/${b.ID}`, { Description: 'd' }, withKey(k2)), 422, reused);
    expect((await t.portal.get(`/portal-api/apps/${b.ID}`)).body.Description).toBe('');

    // another operation is another key space: the same key there is a new key
    const ar = await t.portal.post(
      '/portal-api/access_requests',
      { AppID: a.ID, Catalogue: 'c', Plan: 'p', Products: ['x'], AuthType: 'authToken', User: 'User#1' },
      withKey(k2),
    );
    expect(ar.status).toBe(201);
    expect(ar.headers['idempotent-replayed']).toBeUndefined();
  });

  it('ten concurrent repeats make one app; the others get 409 (in progress) or the replay', async () => {
    const k = idempotencyKey();
    const name = `Concurrent ${k}`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.portal.post('/portal-api/apps', { Name: name }, withKey(k))),
    );
    const fresh = answers.filter((r) => r.status === 200 && !r.headers['idempotent-replayed']);
    const replays = answers.filter((r) => r.status === 200 && r.headers['idempotent-replayed'] === 'true');
    const busy = answers.filter((r) => r.status === 409);
    expect(fresh).toHaveLength(1);
    expect(fresh.length + replays.length + busy.length).toBe(10);
    for (const r of replays) expect(r.text).toBe(fresh[0].text);
    for (const r of busy) expectPortalError(r, 409, /^Idempotency-Key: a request with this key is still in progress/);
    expect(await appsNamed(name)).toEqual([fresh[0].body.ID]);
  });

  it('ten concurrent repeats of an approval make one transition with one event', async () => {
    const ar = await pendingRequest('Raced approval');
    const k = idempotencyKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.portal.put(approvePath(ar.ID), undefined, withKey(k))),
    );
    expect(answers.filter((r) => r.status === 200 && !r.headers['idempotent-replayed'])).toHaveLength(1);
    expect(answers.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(1);
    expect(await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID)).toHaveLength(1);
  });

  it('a lost answer: the client gives up mid-flight, the change is made once, and the retry gets its answer', async () => {
    const ar = await pendingRequest('Lost answer', true);
    const k = idempotencyKey();
    const registrationsBefore = t.idp.registrations.length;
    let atProvider!: () => void;
    const arrived = new Promise<void>((resolve) => (atProvider = resolve));
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    t.idp.beforeReply = async () => {
      atProvider();
      await held;
    };
    const aborted = new AbortController();
    const lost = request(`${t.baseUrl}${approvePath(ar.ID)}`, {
      method: 'PUT',
      headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN, ...withKey(k) },
      signal: aborted.signal,
    }).then(
      () => 'answered',
      () => 'aborted',
    );
    await arrived;
    aborted.abort();
    expect(await lost).toBe('aborted');

    // while the first request still waits on the provider, its repeat is told to come back later
    expectPortalError(await t.portal.put(approvePath(ar.ID), undefined, withKey(k)), 409, /still in progress/);
    t.idp.beforeReply = null;
    letGo();

    const answer = await eventually(
      async () => {
        const res = await t.portal.put(approvePath(ar.ID), undefined, withKey(k));
        return res.status === 409 ? null : res;
      },
      10_000,
      'the stored answer',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['idempotent-replayed']).toBe('true');
    expect(answer.body.Status).toBe('approved');
    expect(answer.body.Credentials).toHaveLength(1);
    expect(t.idp.registrations.length - registrationsBefore).toBe(1);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(1);
    const [{ credentials }] = await t.db.query(
      `SELECT count(*)::int AS credentials FROM portal_credentials WHERE access_request_id = $1`,
      [ar.ID],
    );
    expect(credentials).toBe(1);
  });

  it('a request whose connection closes right after it was sent is still carried out once', async () => {
    const k = idempotencyKey();
    const name = `Abandoned ${k}`;
    const body = JSON.stringify({ Name: name });
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1', () => {
        socket.end(
          `POST /portal-api/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${TEST_SECRETS.PORTAL_API_TOKEN}\r\n` +
            `Idempotency-Key: ${k}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          () => {
            socket.destroy();
            resolve();
          },
        );
      });
      socket.on('error', reject);
    });
    const answer = await eventually(
      async () => {
        const res = await t.portal.post('/portal-api/apps', { Name: name }, withKey(k));
        return res.status === 409 ? null : res;
      },
      10_000,
      'the answer',
    );
    expect(answer.status).toBe(200);
    expect(await appsNamed(name)).toEqual([answer.body.ID]);
  });

  it('a 5xx is not stored: after a failed registration the same key approves', async () => {
    const ar = await pendingRequest('Provider down', true);
    const k = idempotencyKey();
    t.idp.mode = 'fail';
    expectPortalError(await t.portal.put(approvePath(ar.ID), undefined, withKey(k)), 502, /identity provider/);
    expect(await keyRows(k)).toEqual([]);
    t.idp.mode = 'ok';
    const retry = await t.portal.put(approvePath(ar.ID), undefined, withKey(k));
    expect(retry.status).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.body.Status).toBe('approved');
  });

  it('a validation failure is not stored: the corrected request may use the same key', async () => {
    const k = idempotencyKey();
    const invalid = await t.portal.post('/portal-api/apps', { Description: 'no name' }, withKey(k));
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors).toEqual(['Name is required']);
    const fixed = await t.portal.post('/portal-api/apps', { Name: `Fixed ${k}` }, withKey(k));
    expect(fixed.status).toBe(200);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a refusal by the operation is the key’s answer: a 409 and a 404 are replayed as they were', async () => {
    const ar = await pendingRequest('Refused');
    expect((await t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`)).status).toBe(200);
    const k = idempotencyKey();
    const refused = await t.portal.put(approvePath(ar.ID), undefined, withKey(k));
    expect(refused.status).toBe(409);
    expectReplayOf(await t.portal.put(approvePath(ar.ID), undefined, withKey(k)), refused);

    const k2 = idempotencyKey();
    const missing = await t.portal.delete(`/portal-api/apps/2147483647`, withKey(k2));
    expectPortalError(missing, 404, /Application not found/);
    expectReplayOf(await t.portal.delete(`/portal-api/apps/2147483647`, withKey(k2)), missing);
  });

  it('a retried DELETE answers as the first one did, not 404', async () => {
    const app = await createApp(t.portal, { Name: 'Deleted once' });
    const k = idempotencyKey();
    const first = await t.portal.delete(`/portal-api/apps/${app.ID}`, withKey(k));
    expect(first.status).toBe(200);
    expectReplayOf(await t.portal.delete(`/portal-api/apps/${app.ID}`, withKey(k)), first);
    expect((await t.portal.delete(`/portal-api/apps/${app.ID}`)).status).toBe(404);
  });

  it('a key held by a request that died is free once its claim lapses; a live claim is a 409', async () => {
    const k = idempotencyKey();
    const name = `Took over ${k}`;
    const scope = `portal:${sha256Hex(TEST_SECRETS.PORTAL_API_TOKEN)}`;
    // the claim of the very same request (a claim of another request would make this one a 422)
    const fingerprint = requestFingerprint(
      { method: 'POST', url: '/portal-api/apps', query: {}, body: { Name: name } },
      fingerprintKey(Buffer.from(TEST_SECRETS.ENCRYPTION_KEY, 'hex')),
    );
    const claim = (expires: string) =>
      t.db.query(
        `INSERT INTO idempotency_keys (scope, method, route, key, fingerprint, owner, expires_at)
         VALUES ($1, 'POST', '/portal-api/apps', $2, $3, gen_random_uuid(), now() + $4::interval)
         ON CONFLICT (scope, method, route, key) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [scope, k, fingerprint, expires],
      );
    await claim('1 hour');
    expectPortalError(await t.portal.post('/portal-api/apps', { Name: name }, withKey(k)), 409, /still in progress/);
    expect(await appsNamed(name)).toEqual([]);
    await claim('-1 second');
    const res = await t.portal.post('/portal-api/apps', { Name: name }, withKey(k));
    expect(res.status).toBe(200);
    expect(await appsNamed(name)).toEqual([res.body.ID]);
  });

  it('another request racing the claim of a key is a 422, not a 409, once that claim commits', async () => {
    const k = idempotencyKey();
    const scope = `portal:${sha256Hex(TEST_SECRETS.PORTAL_API_TOKEN)}`;
    const waiting = () => sessionsWaitingForLocks(t.db);
    // the claim of a first request (another body), written but not yet committed
    const first = new Client({ connectionString: t.env.databaseUrl });
    await first.connect();
    let res: HttpResponse;
    try {
      await first.query('BEGIN');
      await first.query(
        `INSERT INTO idempotency_keys (scope, method, route, key, fingerprint, owner, expires_at)
         VALUES ($1, 'POST', '/portal-api/apps', $2, 'the first request', gen_random_uuid(), now() + interval '1 hour')`,
        [scope, k],
      );
      const second = t.portal.post('/portal-api/apps', { Name: `Second ${k}` }, withKey(k));
      await eventually(async () => (await waiting()) === 1, 10_000, 'the second claim to wait for the first');
      await first.query('COMMIT');
      res = await second;
    } finally {
      await first.end();
    }
    // as when the first claim was there before it: the key belongs to another request
    expectPortalError(res, 422, /^Idempotency-Key: this key was already used for a different request/);
    expect(await appsNamed(`Second ${k}`)).toEqual([]);
  });

  it('a request whose claim lapsed while it ran commits nothing and answers with what the repeat did', async () => {
    const ar = await pendingRequest('Slow first', true);
    const k = idempotencyKey();
    let atProvider!: () => void;
    const arrived = new Promise<void>((resolve) => (atProvider = resolve));
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    t.idp.beforeReply = async () => {
      t.idp.beforeReply = null; // only the first registration waits
      atProvider();
      await held;
    };
    const slow = t.portal.put(approvePath(ar.ID), undefined, withKey(k));
    await arrived;
    // the first request's claim lapses (as if it had run past its lease); a repeat takes the key over
    await t.db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [k]);
    const repeat = await t.portal.put(approvePath(ar.ID), undefined, withKey(k));
    expect(repeat.status).toBe(200);
    expect(repeat.headers['idempotent-replayed']).toBeUndefined();
    letGo();
    const first = await slow;
    expectReplayOf(first, repeat);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(1);
    // the slow request's registration was withdrawn at the provider: its approval never committed
    const slowClient = JSON.parse(t.idp.registrations[t.idp.registrations.length - 2].reply).client_id;
    await eventually(
      async () => t.idp.deletions.some((d) => d.clientId === slowClient && d.authorized),
      10_000,
      'withdrawal',
    );
  });

  describe('the answer is committed with the change', () => {
    // the stored answer of a key named unstorable-... cannot be written: its request must change nothing
    beforeAll(() => refuseStoredAnswers(t));

    function expectInternalError(res: HttpResponse): void {
      expectPortalError(res, 500, /^Internal server error$/);
    }

    it('creating an app: no app, no event, and the key is free again', async () => {
      const k = unstorableKey();
      const name = `Unstored ${k}`;
      expectInternalError(await t.portal.post('/portal-api/apps', { Name: name }, withKey(k)));
      expect(await appsNamed(name)).toEqual([]);
      expect(await keyRows(k)).toEqual([]);
      const [{ events }] = await t.db.query(
        `SELECT count(*)::int AS events FROM outbox_events WHERE name = 'ApplicationRegistered' AND payload->>'Name' = $1`,
        [name],
      );
      expect(events).toBe(0);
    });

    it('approving: the request stays pending, with no credential and no event', async () => {
      const ar = await pendingRequest('Unstored approval');
      expectInternalError(await t.portal.put(approvePath(ar.ID), undefined, withKey(unstorableKey())));
      const read = await t.portal.get(`/portal-api/access_requests/${ar.ID}`);
      expect(read.body.Status).toBe('pending');
      expect(read.body.Credentials).toEqual([]);
      expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(0);
    });

    it('approving with DCR: the registration is withdrawn at the identity provider', async () => {
      const ar = await pendingRequest('Unstored DCR', true);
      expectInternalError(await t.portal.put(approvePath(ar.ID), undefined, withKey(unstorableKey())));
      const clientId = JSON.parse(t.idp.registrations[t.idp.registrations.length - 1].reply).client_id;
      expect(t.idp.deletions).toContainEqual({ clientId, authorized: true });
      expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Status).toBe('pending');
    });

    it('updating and deleting an app, creating and deleting an access request', async () => {
      const app = await createApp(t.portal, { Name: 'Kept as it was' });
      const ar = await createAccessRequest(t.portal, { AppID: app.ID });
      expectInternalError(
        await t.portal.put(`/portal-api/apps/${app.ID}`, { Name: 'Renamed' }, withKey(unstorableKey())),
      );
      expectInternalError(await t.portal.delete(`/portal-api/apps/${app.ID}`, withKey(unstorableKey())));
      expectInternalError(await t.portal.delete(`/portal-api/access_requests/${ar.ID}`, withKey(unstorableKey())));
      expectInternalError(
        await t.portal.post(
          '/portal-api/access_requests',
          { AppID: app.ID, Catalogue: 'c', Plan: 'p', Products: ['x'], AuthType: 'authToken', User: 'User#9' },
          withKey(unstorableKey()),
        ),
      );
      const read = await t.portal.get(`/portal-api/apps/${app.ID}`);
      expect(read.body.Name).toBe('Kept as it was');
      expect(read.body.AccessRequests).toEqual([[expect.objectContaining({ ID: ar.ID })]]);
    });

    it('webhooks: creating one, its headers, a rotation and a test send', async () => {
      const name = `Unstored hook ${randomUUID()}`;
      const create = { Name: name, URL: t.sink.url(), Events: ['AccessRequestApproved'] };
      expectInternalError(await t.portal.post('/portal-api/webhooks', create, withKey(unstorableKey())));
      const [{ hooks }] = await t.db.query(`SELECT count(*)::int AS hooks FROM webhooks WHERE name = $1`, [name]);
      expect(hooks).toBe(0);

      const hook = (await t.portal.post('/portal-api/webhooks', create)).body;
      const base = `/portal-api/webhooks/${hook.ID}`;
      expectInternalError(
        await t.portal.post(`${base}/headers`, { Name: 'X-A', Value: 'b' }, withKey(unstorableKey())),
      );
      expectInternalError(await t.portal.put(base, { Name: 'renamed' }, withKey(unstorableKey())));
      expectInternalError(await t.portal.post(`${base}/secret/rotate`, {}, withKey(unstorableKey())));
      expectInternalError(await t.portal.post(`${base}/test`, {}, withKey(unstorableKey())));
      expectInternalError(await t.portal.delete(base, withKey(unstorableKey())));
      // a redelivery of a delivered test send: still delivered, one attempt, nothing queued
      const sent = (await t.portal.post(`${base}/test`, {})).body;
      const delivery = `${base}/deliveries/${sent.DeliveryID}`;
      await eventually(
        async () => (await t.portal.get(delivery)).body.Status === 'delivered',
        10_000,
        'the test delivery',
      );
      expectInternalError(await t.portal.post(`${delivery}/redeliver`, undefined, withKey(unstorableKey())));
      expect((await t.portal.get(delivery)).body).toMatchObject({ Status: 'delivered', AttemptCount: 1 });
      expect(t.sink.received.filter((r) => r.headers['webhook-id'] === sent.DeliveryID)).toHaveLength(1);
      const read = await t.portal.get(base);
      expect(read.body).toMatchObject({ Name: name, Headers: [] });
      expect((await t.portal.get(`${base}/secret`)).body.Secret).toBe(hook.Secret);
      expect((await t.portal.get(`${base}/deliveries`)).body).toEqual([
        expect.objectContaining({ ID: sent.DeliveryID }),
      ]);
    });
  });

  it('webhook routes: a retried creation, header and test send each happen once', async () => {
    const k = idempotencyKey();
    const name = `Hook ${k}`;
    const create = { Name: name, URL: t.sink.url(), Events: ['AccessRequestApproved'] };
    const first = await t.portal.post('/portal-api/webhooks', create, withKey(k));
    expect(first.status).toBe(201);
    expectReplayOf(await t.portal.post('/portal-api/webhooks', create, withKey(k)), first);
    const [{ hooks }] = await t.db.query(`SELECT count(*)::int AS hooks FROM webhooks WHERE name = $1`, [name]);
    expect(hooks).toBe(1);

    const base = `/portal-api/webhooks/${first.body.ID}`;
    const hk = idempotencyKey();
    const header = await t.portal.post(`${base}/headers`, { Name: 'X-Once', Value: '1' }, withKey(hk));
    expect(header.status).toBe(201);
    expectReplayOf(await t.portal.post(`${base}/headers`, { Name: 'X-Once', Value: '1' }, withKey(hk)), header);
    expect((await t.portal.get(`${base}/headers`)).body).toHaveLength(1);

    const tk = idempotencyKey();
    const sent = await t.portal.post(`${base}/test`, { Note: 'once' }, withKey(tk));
    expect(sent.status).toBe(202);
    expectReplayOf(await t.portal.post(`${base}/test`, { Note: 'once' }, withKey(tk)), sent);
    // the test delivery is queued after the commit and arrives, once
    await t.sink.waitFor(
      (r) => r.some((x) => x.headers['webhook-id'] === sent.body.DeliveryID),
      15_000,
      'the test delivery',
    );
    expect((await t.portal.get(`${base}/deliveries`)).body).toHaveLength(1);

    // a redelivery: its retry gets the first 200 again (not "still pending"), and one manual attempt is made
    const delivery = `${base}/deliveries/${sent.body.DeliveryID}`;
    await eventually(
      async () => (await t.portal.get(delivery)).body.Status === 'delivered',
      10_000,
      'the test delivery to settle',
    );
    const rk = idempotencyKey();
    const redelivered = await t.portal.post(`${delivery}/redeliver`, undefined, withKey(rk));
    expect(redelivered.status).toBe(200);
    expectReplayOf(await t.portal.post(`${delivery}/redeliver`, undefined, withKey(rk)), redelivered);
    const settled = await eventually(
      async () => {
        const d = (await t.portal.get(delivery)).body;
        return d.Status === 'delivered' && d.AttemptCount === 2 ? d : null;
      },
      10_000,
      'the redelivery',
    );
    expect(settled.Attempts.map((a: any) => a.Trigger)).toEqual(['scheduled', 'manual']);
  });

  it('keys are the caller’s own: another portal token with the same key makes its own change', async () => {
    const k = idempotencyKey();
    const name = `Scoped ${k}`;
    const mine = await t.portal.post('/portal-api/apps', { Name: name }, withKey(k));
    expect(mine.status).toBe(200);
    const otherToken = 'another-portal-token-0123456789';
    const other = await startTestApp({ env: t.env, vars: { PORTAL_API_TOKEN: otherToken } });
    try {
      const theirs = await other.http.post(
        '/portal-api/apps',
        { Name: name },
        { authorization: otherToken, ...withKey(k) },
      );
      expect(theirs.status).toBe(200);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(theirs.body.ID).not.toBe(mine.body.ID);
    } finally {
      await other.close();
    }
    expect(await appsNamed(name)).toHaveLength(2);
  });

  it('refuses hostile keys with 422 in the portal error body, storing nothing', async () => {
    const before = (await t.db.query(`SELECT count(*)::int AS n FROM idempotency_keys`))[0].n;
    for (const bad of ['x'.repeat(256), 'a b', '"unterminated', '"a";p=1', '"x" "y"', 'tab\there', '""']) {
      const res = await t.portal.post('/portal-api/apps', { Name: 'hostile' }, withKey(bad));
      expectPortalError(res, 422, /^Idempotency-Key: /);
    }
    const twice = await request(`${t.baseUrl}/portal-api/apps`, {
      method: 'POST',
      headers: [
        'authorization',
        TEST_SECRETS.PORTAL_API_TOKEN,
        'content-type',
        'application/json',
        'idempotency-key',
        'a',
        'idempotency-key',
        'b',
      ],
      body: JSON.stringify({ Name: 'hostile' }),
    });
    expect(twice.statusCode).toBe(422);
    expect(await twice.body.json()).toEqual({
      status: 'error',
      errors: ['Idempotency-Key: send one key, in one header field'],
    });
    expect((await t.db.query(`SELECT count(*)::int AS n FROM idempotency_keys`))[0].n).toBe(before);
    expect(await appsNamed('hostile')).toEqual([]);
  });
});
