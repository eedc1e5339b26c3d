import { BUSY_RETRY_AFTER_SECONDS } from '../src/common/errors';
import { IdempotencyStore } from '../src/common/idempotency/idempotency.store';
import { eventually } from './helpers/eventually';
import { HttpClient, HttpResponse } from './helpers/http-client';
import { portalClient } from './helpers/portal';
import { TcpRelay } from './helpers/tcp-relay';
import { startTestApp } from './helpers/test-app';
import { useTestEnv } from './helpers/use-service';

type Env = ReturnType<typeof useTestEnv>;

/** An API process whose database connections all go through a relay the spec can take the database away with. */
async function behindRelay(env: Env, vars: Record<string, string> = {}) {
  const target = new URL(env.databaseUrl);
  const relay = env.adopt(await TcpRelay.start({ host: target.hostname, port: Number(target.port || 5432) }));
  const proxied = new URL(env.databaseUrl);
  proxied.port = String(relay.port);
  const t = env.adopt(await startTestApp({ env, vars: { ROLE: 'api', DATABASE_URL: proxied.toString(), ...vars } }));
  return { relay, t, portal: portalClient(t) };
}

/** A 503 with Retry-After and `message` in the portal's or the dashboard's error body. */
function expectUnavailable(res: HttpResponse, family: 'portal' | 'dashboard', message: string): void {
  expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
    status: 503,
    retryAfter: String(BUSY_RETRY_AFTER_SECONDS),
    body:
      family === 'portal' ? { status: 'error', errors: [message] } : { Status: 'Error', Message: message, Meta: null },
  });
}

const DASHBOARD_KEY = { authorization: 'Bearer 0123456789abcdef0123456789abcdef' };

/**
 * A request whose database connection cannot be opened within the pool's wait (10 s: Postgres accepts no
 * connection, or accepts and never answers) is answered 503 with Retry-After in its family's body, as when every
 * connection is taken (pool-exhausted.e2e-spec.ts), not 500; and the service answers again once Postgres does.
 */
describe('a request whose database connection cannot be opened in time', () => {
  const env = useTestEnv();

  it('is answered 503 with Retry-After, and the service recovers with the database', async () => {
    const { relay, t, portal } = await behindRelay(env);
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);

    relay.freeze();
    const [p, d] = await Promise.all([portal.get('/portal-api/webhooks'), t.http.get('/api/apis', DASHBOARD_KEY)]);
    const message = `the service is busy: no database connection came free in time; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`;
    expectUnavailable(p, 'portal', message);
    expectUnavailable(d, 'dashboard', message);

    relay.thaw();
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);
  }, 60_000);
});

/**
 * A database that is away for a moment (restarting, failing over: connections cut, new ones closed at once) is a
 * 503 with Retry-After too, not an unexpected 500: what it had not committed was rolled back, and it may be sent again.
 */
describe('a request that finds the database away for a moment', () => {
  const env = useTestEnv();

  it('is answered 503 with Retry-After in its family body, keeps nothing, and the service answers again after', async () => {
    const { relay, t, portal } = await behindRelay(env);
    expect((await portal.get('/portal-api/apps')).status).toBe(200);

    relay.refuse();
    const [created, listed] = await Promise.all([
      portal.post('/portal-api/apps', { Name: 'while away', UserID: 1 }),
      t.http.get('/api/apis', DASHBOARD_KEY),
    ]);
    const message = `the service cannot reach its database for the moment; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`;
    expectUnavailable(created, 'portal', message);
    expectUnavailable(listed, 'dashboard', message);

    relay.thaw();
    const apps = await portal.get('/portal-api/apps');
    expect(apps.status).toBe(200);
    expect(apps.body).toEqual([]);
  }, 60_000);
});

/**
 * A statement bounded by DATABASE_STATEMENT_TIMEOUT: one that runs past it (here waiting for a lock) is cancelled by
 * Postgres, and one that gets no answer at all (a Postgres that froze under an open connection) has its connection
 * closed once as long again has passed. Either way the request is a 503 with Retry-After, not a wait without end.
 */
describe('a request whose statement runs past DATABASE_STATEMENT_TIMEOUT or goes unanswered', () => {
  const env = useTestEnv();
  const message = `the service cannot reach its database for the moment; send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`;

  it('is answered 503 with Retry-After when its statement waits too long for a lock, and 200 once the lock is gone', async () => {
    const { t, portal } = await behindRelay(env, { DATABASE_STATEMENT_TIMEOUT: '1s' });
    expect((await portal.get('/portal-api/apps')).status).toBe(200);
    const holder = await env.client();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE portal_apps, dashboard_users IN ACCESS EXCLUSIVE MODE');
    try {
      const [p, d] = await Promise.all([portal.get('/portal-api/apps'), t.http.get('/api/apis', DASHBOARD_KEY)]);
      // the database answered: it cancelled the statement, and the message says so
      const cancelled =
        'a database statement of this request did not finish in time and was cancelled; ' +
        `send the request again in ${BUSY_RETRY_AFTER_SECONDS} s`;
      expectUnavailable(p, 'portal', cancelled);
      expectUnavailable(d, 'dashboard', cancelled);
    } finally {
      await holder.query('COMMIT');
    }
    expect((await portal.get('/portal-api/apps')).status).toBe(200);
  }, 60_000);

  /**
   * The retries of a write that got 503 (sooner than Retry-After asks), until an answer other than 503 or 409 "still
   * in progress": within 15 s, a quarter of the claim's lease. A key left held until its claim lapses answers 409 for
   * the whole lease (60 s); another open connection may still lose an answer meanwhile (a 503 again).
   */
  const retriedUntilAnswered = (portal: HttpClient, body: object, key: Record<string, string>) =>
    eventually(
      async () => {
        const res = await portal.post('/portal-api/apps', body, key);
        if (res.status === 409) return undefined;
        if (res.status !== 503) return res;
        expectUnavailable(res, 'portal', message);
        return undefined;
      },
      15_000,
      'an answer other than 503 or 409',
      500,
    );

  it("frees an Idempotency-Key whose claim committed with its answer lost: the client's retry runs, not a 409", async () => {
    const { relay, portal } = await behindRelay(env, { DATABASE_STATEMENT_TIMEOUT: '1s' });
    expect((await portal.get('/portal-api/apps')).status).toBe(200);
    // what the service sends still reaches Postgres, and commits; the answers on its open connections are lost
    relay.muteAnswers();
    const key = { 'idempotency-key': 'answer-lost-on-the-way' };
    const body = { Name: 'answer lost', UserID: 1 };
    expectUnavailable(await portal.post('/portal-api/apps', body, key), 'portal', message);
    expect((await retriedUntilAnswered(portal, body, key)).status).toBe(200);
    const apps = (await portal.get('/portal-api/apps')).body as { Name: string }[];
    expect(apps.filter((a) => a.Name === body.Name)).toHaveLength(1);
  }, 60_000);

  it('frees such a key though the first try to free it fails too: tried again, not left to lapse', async () => {
    const { relay, t, portal } = await behindRelay(env, { DATABASE_STATEMENT_TIMEOUT: '1s' });
    expect((await portal.get('/portal-api/apps')).status).toBe(200);
    // the connection the pool hands out next may have been cut with the one that failed: the first try fails
    const store = t.app.get(IdempotencyStore);
    const release = store.release.bind(store);
    let refused = 0;
    const spy = jest.spyOn(store, 'release').mockImplementation(async (claim) => {
      if (refused++ > 0) return release(claim);
      throw new Error('Connection terminated unexpectedly');
    });
    try {
      relay.muteAnswers();
      const key = { 'idempotency-key': 'freed-on-the-second-try' };
      const body = { Name: 'freed late', UserID: 1 };
      expectUnavailable(await portal.post('/portal-api/apps', body, key), 'portal', message);
      expect((await retriedUntilAnswered(portal, body, key)).status).toBe(200);
      expect(refused).toBeGreaterThanOrEqual(2);
    } finally {
      spy.mockRestore();
    }
  }, 60_000);

  it('is answered 503 with Retry-After when Postgres stops answering on its open connection, and the service recovers', async () => {
    const { relay, portal } = await behindRelay(env, { DATABASE_STATEMENT_TIMEOUT: '1s' });
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);

    // the connections the service holds now carry nothing either way, and close nothing; new ones are forwarded
    relay.silence();
    // the pool hands out the connection it was just given back: silenced
    expectUnavailable(await portal.get('/portal-api/webhooks'), 'portal', message);
    // more at once than the pool holds: every silenced connection left is met and closed, new ones answer
    const answers = await Promise.all(Array.from({ length: 25 }, () => portal.get('/portal-api/webhooks')));
    for (const res of answers) if (res.status !== 200) expectUnavailable(res, 'portal', message);
    expect((await portal.get('/portal-api/webhooks')).status).toBe(200);
  }, 60_000);
});
