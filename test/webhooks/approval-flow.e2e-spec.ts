import { Webhook } from 'standardwebhooks';
import { RFC3339 } from '../helpers/portal';
import { useService } from '../helpers/use-service';

describe('portal changes reach subscribers end to end', () => {
  // an IPv6 loopback subscriber
  const t = useService({ receiver: '::1' });

  it('approve → one signed AccessRequestApproved delivery with the access request as Message, no secrets', async () => {
    const hook = await t.portal.post('/portal-api/webhooks', {
      Name: 'flow',
      URL: t.sink.url('/flow'),
      Events: [
        'ApplicationRegistered',
        'AccessRequestCreated',
        'AccessRequestApproved',
        'CredentialRegistered',
        'AccessRequestRejected',
      ],
    });
    expect(hook.status).toBe(201);
    const app = await t.portal.post('/portal-api/apps', {
      Name: 'My app',
      Description: 'd',
      RedirectURLs: 'https://app.example.com/cb',
      UserID: 1,
      Visibility: 'organisation',
    });
    expect(app.status).toBe(200);
    const ar = await t.portal.post('/portal-api/access_requests', {
      AppID: app.body.ID,
      Catalogue: 'Payments',
      Plan: 'Gold',
      Products: ['payments-api', 'refunds-api'],
      AuthType: 'authToken',
      DCREnabled: false,
      ProvisionImmediately: false,
      User: 'User#1',
    });
    expect(ar.status).toBe(201);
    const approved = await t.portal.put(`/portal-api/access_requests/${ar.body.ID}/approve`);
    expect(approved.status).toBe(200);
    const full = await t.portal.get(`/portal-api/access_requests/${ar.body.ID}`);
    const credential = full.body.Credentials[0].Credential as string;
    expect(credential.length).toBeGreaterThan(8);

    const received = await t.sink.waitFor(
      (r) => r.some((x) => JSON.parse(x.body).Event === 'AccessRequestApproved') && r.length >= 4,
      15_000,
      'the flow events',
    );
    const secret = hook.body.Secret;
    const bodies = received.map((r) => {
      expect(r.method).toBe('POST');
      return new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { Event: string; Message: any };
    });
    expect(bodies.map((b) => b.Event)).toEqual(
      expect.arrayContaining([
        'ApplicationRegistered',
        'AccessRequestCreated',
        'AccessRequestApproved',
        'CredentialRegistered',
      ]),
    );
    const approvedEvents = bodies.filter((b) => b.Event === 'AccessRequestApproved');
    expect(approvedEvents).toHaveLength(1);
    expect(approvedEvents[0].Message).toEqual({
      ID: ar.body.ID,
      AppID: app.body.ID,
      ByUser: 1,
      Status: 'approved',
      ProductIDs: [],
      PlanID: 0,
      CreatedAt: expect.stringMatching(RFC3339),
      UpdatedAt: expect.stringMatching(RFC3339),
      UserID: 1,
      Catalogue: 'Payments',
      Client: 'My app',
      Plan: 'Gold',
      Products: ['payments-api', 'refunds-api'],
      AuthType: 'authToken',
    });
    // the credential's id, which the approval's one statement generates and puts into the event itself
    const [issued] = await t.db.query(`SELECT id FROM portal_credentials WHERE access_request_id = $1`, [ar.body.ID]);
    const registered = bodies.filter((b) => b.Event === 'CredentialRegistered');
    expect(registered).toHaveLength(1);
    expect(registered[0].Message).toMatchObject({ ID: issued.id, AccessRequestID: ar.body.ID, AppID: app.body.ID });
    for (const r of received) expect(r.body).not.toContain(credential);

    // approving again is a no-op that emits nothing; rejecting emits AccessRequestRejected
    expect((await t.portal.put(`/portal-api/access_requests/${ar.body.ID}/approve`)).status).toBe(200);
    expect((await t.portal.put(`/portal-api/access_requests/${ar.body.ID}/reject`)).status).toBe(200);
    await t.sink.waitFor(
      (r) => r.some((x) => JSON.parse(x.body).Event === 'AccessRequestRejected'),
      15_000,
      'the rejection',
    );
    const events = t.sink.received.map((r) => JSON.parse(r.body).Event);
    expect(events.filter((e) => e === 'AccessRequestApproved')).toHaveLength(1);
  });
});
