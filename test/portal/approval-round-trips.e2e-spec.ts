import { PreparingClient } from '../../src/database/data-source';
import { createAccessRequest, createApp } from '../helpers/portal';
import { useService } from '../helpers/use-service';

/**
 * The statements each access-request route sends to Postgres, counted at the connection (an API-only
 * process, so no worker shares the pool): an approval is an unlocked read and then one statement that is a
 * transaction by itself (status, credential, events and their NOTIFY), two round trips in all, and its answer is
 * built without reading the request back. With DCR, the identity provider is called between the two.
 */
describe('access-request routes: round trips to Postgres', () => {
  const t = useService({ vars: { ROLE: 'api' }, idp: true });
  let sent: string[] = [];
  let spy: jest.SpyInstance;

  beforeAll(async () => {
    const original = PreparingClient.prototype.query;
    spy = jest.spyOn(PreparingClient.prototype, 'query').mockImplementation(function (
      this: PreparingClient,
      ...args: unknown[]
    ) {
      const text = args[0];
      sent.push(typeof text === 'string' ? text : String((text as { text?: string })?.text));
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    });
  });
  afterAll(() => spy.mockRestore());

  async function statementsOf(call: () => Promise<{ status: number }>, status = 200): Promise<string[]> {
    sent = [];
    expect((await call()).status).toBe(status);
    return sent.map((s) => s.replace(/\s+/g, ' ').trim());
  }
  const notifies = (statements: string[]) => statements.filter((s) => s.includes('pg_notify')).length;

  it('approves in two round trips with one NOTIFY, reads in one, and changes nothing in two when the status is already set', async () => {
    const app = await createApp(t.portal, { Name: 'Counted app' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID });

    const approve = await statementsOf(() => t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`));
    expect(approve).toHaveLength(2);
    expect(approve[0]).toMatch(/^SELECT /);
    expect(approve[1]).toMatch(/^WITH changed AS \(\s*UPDATE portal_access_requests/);
    expect(notifies(approve)).toBe(1);
    expect(approve.filter((s) => s.includes('FOR UPDATE'))).toEqual([]);

    // the read, and the read with the credentials in force to answer with
    const again = await statementsOf(() => t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`));
    expect(again).toHaveLength(2);
    expect(again.every((s) => s.startsWith('SELECT '))).toBe(true);
    expect(notifies(again)).toBe(0);

    expect(await statementsOf(() => t.portal.get(`/portal-api/access_requests/${ar.ID}`))).toHaveLength(1);

    const reject = await statementsOf(() => t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`));
    expect(reject).toHaveLength(2);
    expect(notifies(reject)).toBe(1);
  });

  it('a DCR approval calls the identity provider after the read and before the change, in two round trips as well', async () => {
    const app = await createApp(t.portal, { Name: 'Registered app' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID, AuthType: 'oauth2.0', DCREnabled: true });
    let duringRegistration: string[] = [];
    t.idp.beforeReply = async () => {
      duringRegistration = [...sent];
    };
    try {
      const approve = await statementsOf(() => t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`));
      expect(duringRegistration).toHaveLength(1);
      expect(duringRegistration[0]).toMatch(/^SELECT /);
      expect(approve).toHaveLength(2);
      expect(approve[1]).toMatch(/^WITH changed AS /);
      expect(notifies(approve)).toBe(1);
    } finally {
      t.idp.beforeReply = null;
    }
  });

  it('with an Idempotency-Key, approves in six: the claim first, the change inside the request transaction, and the answer stored just before COMMIT', async () => {
    const app = await createApp(t.portal, { Name: 'Keyed app' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID });
    const key = { 'idempotency-key': `approve-${ar.ID}` };
    const approve = await statementsOf(() =>
      t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`, undefined, key),
    );
    expect(approve).toHaveLength(6);
    expect(approve[0]).toMatch(/^WITH claimed AS \(\s*INSERT INTO idempotency_keys/);
    expect(approve[1]).toMatch(/^SELECT /);
    expect(approve[2]).toBe('START TRANSACTION');
    expect(approve[3]).toMatch(/^WITH changed AS /);
    expect(approve[4]).toMatch(/^UPDATE idempotency_keys SET status/);
    expect(approve[5]).toBe('COMMIT');
    expect(notifies(approve)).toBe(1);
    // the retry: the claim statement finds the stored answer, and that is all
    expect(
      await statementsOf(() => t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`, undefined, key)),
    ).toHaveLength(1);
  });

  it('creates a request provisioned at once in one transaction with one NOTIFY for its three events', async () => {
    const app = await createApp(t.portal, { Name: 'Provisioned app' });
    const statements = await statementsOf(
      () =>
        t.portal.post('/portal-api/access_requests', {
          AppID: app.ID,
          Catalogue: 'c',
          Plan: 'p',
          Products: ['x'],
          AuthType: 'authToken',
          ProvisionImmediately: true,
          User: 'User#1',
        }),
      201,
    );
    expect(statements).toHaveLength(6); // BEGIN, app, request, credential, events, COMMIT
    expect(notifies(statements)).toBe(1);
  });
});
