import { emitEvent } from '../helpers/events';
import { Sink } from '../helpers/sink';
import { startTestApp, TestApp } from '../helpers/test-app';
import { TEST_SECRETS } from '../helpers/test-env';
import { eventually } from '../helpers/eventually';

describe('webhook address guard with the allow-list closed', () => {
  let t: TestApp;
  let sink: Sink;

  beforeAll(async () => {
    // loopback NOT allowed: the only non-public addresses a test may use are loopback ones
    t = await startTestApp({ vars: { WEBHOOK_ALLOWED_CIDRS: '', WEBHOOK_RETRY_SCHEDULE: '0,1' } });
    sink = await Sink.start();
  });
  afterAll(async () => {
    await sink.close();
    await t.close();
  });

  it.each([
    ['an IPv4 loopback literal', () => sink.url()],
    ['a hostname that resolves to loopback (checked after DNS)', () => `http://localhost:${sink.port}/hook`],
  ])('refuses %s and records blocked_address without retrying', async (_name, url) => {
    const api = t.http.with({ authorization: TEST_SECRETS.PORTAL_API_TOKEN });
    const w = (
      await api.post('/portal-api/webhooks', { Name: 'guarded', URL: url(), Events: ['ApplicationRegistered'] })
    ).body;
    await emitEvent(t, 'ApplicationRegistered', { ID: 1, Name: 'app' });
    const d = await eventually(async () => {
      const [first] = (await api.get(`/portal-api/webhooks/${w.ID}/deliveries`)).body;
      return first?.Status === 'failed'
        ? (await api.get(`/portal-api/webhooks/${w.ID}/deliveries/${first.ID}`)).body
        : null;
    });
    expect(d.Attempts).toEqual([expect.objectContaining({ Number: 1, StatusCode: null, Error: 'blocked_address' })]);
    expect(sink.received).toHaveLength(0);
  });
});
