import { Webhook } from 'standardwebhooks';
import { Sink } from '../helpers/sink';
import { RFC3339, startWithReceiver } from '../helpers/portal';
import { HttpClient } from '../helpers/http-client';
import { TestApp } from '../helpers/test-app';

describe('portal changes reach subscribers end to end', () => {
  let t: TestApp;
  let api: HttpClient;
  let sink: Sink;

  beforeAll(async () => {
    // an IPv6 loopback subscriber
    ({ t, portal: api, sink } = await startWithReceiver({ sinkHost: '::1' }));
  });
  afterAll(() => t.close());

  it('approve → one signed AccessRequestApproved delivery with the access request as Message, no secrets', async () => {
    const hook = await api.post('/portal-api/webhooks', {
      Name: 'flow',
      URL: sink.url('/flow'),
      Events: [
        'ApplicationRegistered',
        'AccessRequestCreated',
        'AccessRequestApproved',
        'CredentialRegistered',
        'AccessRequestRejected',
      ],
    });
    expect(hook.status).toBe(201);
    const app = await api.post('/portal-api/apps', {
      Name: 'My app',
      Description: 'd',
      RedirectURLs: 'https://app.example.com/cb',
      UserID: 1,
      Visibility: 'organisation',
    });
    expect(app.status).toBe(200);
    const ar = await api.post('/portal-api/access_requests', {
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
    const approved = await api.put(`/portal-api/access_requests/${ar.body.ID}/approve`);
    expect(approved.status).toBe(200);
    const full = await api.get(`/portal-api/access_requests/${ar.body.ID}`);
    const credential = full.body.Credentials[0].Credential as string;
    expect(credential.length).toBeGreaterThan(8);

    const received = await sink.waitFor(
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
    for (const r of received) expect(r.body).not.toContain(credential);

    // approving again is a no-op that emits nothing; rejecting emits AccessRequestRejected
    expect((await api.put(`/portal-api/access_requests/${ar.body.ID}/approve`)).status).toBe(200);
    expect((await api.put(`/portal-api/access_requests/${ar.body.ID}/reject`)).status).toBe(200);
    await sink.waitFor(
      (r) => r.some((x) => JSON.parse(x.body).Event === 'AccessRequestRejected'),
      15_000,
      'the rejection',
    );
    const events = sink.received.map((r) => JSON.parse(r.body).Event);
    expect(events.filter((e) => e === 'AccessRequestApproved')).toHaveLength(1);
  });
});
