import { randomUUID } from 'node:crypto';
import { ADMIN, seedUser, SeededUser } from '../helpers/dashboard';
import { HttpResponse } from '../helpers/http-client';
import { expectReplayOf, idempotencyKey, refuseStoredAnswers, unstorableKey, withKey } from '../helpers/idempotency';
import { useService } from '../helpers/use-service';

const email = () => `u-${randomUUID()}@example.com`;
const newUser = (address = email()) => ({
  email_address: address,
  first_name: 'Ida',
  last_name: 'Empotent',
  active: true,
  user_permissions: { apis: 'read' },
  password: 'correct horse battery staple',
});

/** The dashboard (and admin) error body. */
function expectDashboardError(res: HttpResponse, status: number, message: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ Status: 'Error', Message: expect.stringMatching(message), Meta: null });
}

/**
 * Idempotency-Key on the dashboard and admin families, over HTTP against real Postgres and Redis: keys are
 * each user's own (and the admin secret's), answers are replayed in those families' bodies, and the stored
 * answer commits with the user it created or deleted.
 */
describe('idempotent retries on the dashboard and admin routes', () => {
  const t = useService({ vars: { ROLE: 'api' } });
  let alice: SeededUser;
  let bob: SeededUser;

  beforeAll(async () => {
    alice = await seedUser(t, { permissions: { users: 'write', apis: 'read' } });
    bob = await seedUser(t, { permissions: { users: 'write', apis: 'read' } });
  });

  const usersWith = async (address: string): Promise<string[]> =>
    (await t.db.query(`SELECT id FROM dashboard_users WHERE email_address = $1`, [address])).map((r: any) => r.id);

  it('a retried POST /api/users creates one user and replays the first answer', async () => {
    const k = idempotencyKey();
    const body = newUser();
    const first = await alice.http.post('/api/users', body, withKey(k));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ Status: 'OK', Message: 'User created', Meta: first.body.ID, ID: first.body.ID });
    expectReplayOf(await alice.http.post('/api/users', body, withKey(k)), first);
    expect(await usersWith(body.email_address)).toEqual([first.body.ID]);
  });

  it('keys are each user’s own: another user with the same key makes its own change', async () => {
    const k = idempotencyKey();
    const mine = await alice.http.post('/api/users', newUser(), withKey(k));
    const theirs = await bob.http.post('/api/users', newUser(), withKey(k));
    expect(mine.status).toBe(200);
    expect(theirs.status).toBe(200);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.ID).not.toBe(mine.body.ID);
  });

  it('the same key with another body is a 422 in the dashboard error body', async () => {
    const k = idempotencyKey();
    expect((await alice.http.post('/api/users', newUser(), withKey(k))).status).toBe(200);
    const other = newUser();
    expectDashboardError(
      await alice.http.post('/api/users', other, withKey(k)),
      422,
      /^Idempotency-Key: this key was already used for a different request/,
    );
    expect(await usersWith(other.email_address)).toEqual([]);
  });

  it('a refusal (409, e-mail taken) is replayed; a validation failure (400) is not stored', async () => {
    const taken = newUser();
    expect((await alice.http.post('/api/users', taken)).status).toBe(200);
    const k = idempotencyKey();
    const refused = await alice.http.post('/api/users', taken, withKey(k));
    expectDashboardError(refused, 409, /^User email already exists for this org\.$/);
    expectReplayOf(await alice.http.post('/api/users', taken, withKey(k)), refused);

    const k2 = idempotencyKey();
    const invalid = await alice.http.post('/api/users', { email_address: 'not an address' }, withKey(k2));
    expectDashboardError(invalid, 400, /^User object validation failed\. /);
    const fixed = await alice.http.post('/api/users', newUser(), withKey(k2));
    expect(fixed.status).toBe(200);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a retried DELETE /api/users/{id} replays its 200 instead of a 404', async () => {
    const created = await alice.http.post('/api/users', newUser());
    const k = idempotencyKey();
    const first = await alice.http.delete(`/api/users/${created.body.ID}`, withKey(k));
    expect(first.status).toBe(200);
    expectReplayOf(await alice.http.delete(`/api/users/${created.body.ID}`, withKey(k)), first);
  });

  it('a retried POST /admin/users gives the same user and access key, once', async () => {
    const k = idempotencyKey();
    const body = newUser();
    const first = await t.http.post('/admin/users', body, { ...ADMIN, ...withKey(k) });
    expect(first.status).toBe(200);
    expect(first.body.Message).toMatch(/^[0-9a-f]{32}$/);
    expectReplayOf(await t.http.post('/admin/users', body, { ...ADMIN, ...withKey(k) }), first);
    expect(await usersWith(body.email_address)).toEqual([first.body.ID]);
    // the access key is in the stored answer, sealed; and the request (with its password) only as a keyed digest
    const [stored] = await t.db.query(`SELECT to_jsonb(k)::text AS row FROM idempotency_keys k WHERE key = $1`, [k]);
    expect(stored.row).not.toContain(first.body.Message);
    expect(stored.row).not.toContain(body.email_address);
    expectDashboardError(
      await t.http.post('/admin/users', newUser(), { ...ADMIN, ...withKey(k) }),
      422,
      /^Idempotency-Key: this key was already used/,
    );
  });

  it('ten concurrent repeats on /admin/users make one user; the others get 409 or the replay', async () => {
    const k = idempotencyKey();
    const body = newUser();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => t.http.post('/admin/users', body, { ...ADMIN, ...withKey(k) })),
    );
    const fresh = answers.filter((r) => r.status === 200 && !r.headers['idempotent-replayed']);
    expect(fresh).toHaveLength(1);
    for (const r of answers.filter((x) => x !== fresh[0])) {
      if (r.status === 200) expect(r.text).toBe(fresh[0].text);
      else expectDashboardError(r, 409, /^Idempotency-Key: a request with this key is still in progress/);
    }
    expect(await usersWith(body.email_address)).toEqual([fresh[0].body.ID]);
  });

  it('refuses hostile keys with 400 in the dashboard error body', async () => {
    for (const bad of ['x'.repeat(256), 'two words', '"open', '"a";q=1', '']) {
      const res = await alice.http.post('/api/users', newUser(), withKey(bad));
      expectDashboardError(res, 400, /^Idempotency-Key: /);
      const admin = await t.http.post('/admin/users', newUser(), { ...ADMIN, ...withKey(bad) });
      expectDashboardError(admin, 400, /^Idempotency-Key: /);
    }
  });

  describe('the answer is committed with the change', () => {
    beforeAll(() => refuseStoredAnswers(t));
    const unstorable = () => withKey(unstorableKey());

    it('creating a user (dashboard and admin) and deleting one change nothing when the answer cannot be kept', async () => {
      const a = newUser();
      expectDashboardError(await alice.http.post('/api/users', a, unstorable()), 500, /^Internal server error$/);
      const b = newUser();
      expectDashboardError(
        await t.http.post('/admin/users', b, { ...ADMIN, ...unstorable() }),
        500,
        /^Internal server error$/,
      );
      expect(await usersWith(a.email_address)).toEqual([]);
      expect(await usersWith(b.email_address)).toEqual([]);

      const kept = await alice.http.post('/api/users', newUser());
      expectDashboardError(
        await alice.http.delete(`/api/users/${kept.body.ID}`, unstorable()),
        500,
        /^Internal server error$/,
      );
      expect((await alice.http.get(`/api/users/${kept.body.ID}`)).status).toBe(200);
    });
  });
});
