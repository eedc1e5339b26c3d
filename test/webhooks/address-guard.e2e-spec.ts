import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

describe('webhook address guard with the allow-list closed', () => {
  // loopback NOT allowed: the only non-public addresses a test may use are loopback ones
  const t = useService({ vars: { WEBHOOK_ALLOWED_CIDRS: '', WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true });

  it.each([
    ['an IPv4 loopback literal', () => t.sink.url()],
    ['a hostname that resolves to loopback (checked after DNS)', () => `http://localhost:${t.sink.port}/hook`],
  ])('refuses %s and records blocked_address without retrying', async (_name, url) => {
    const w = (
      await t.portal.post('/portal-api/webhooks', { Name: 'guarded', URL: url(), Events: ['ApplicationRegistered'] })
    ).body;
    await emitEvent(t, 'ApplicationRegistered', { ID: 1, Name: 'app' });
    const d = await eventually(async () => {
      const [first] = (await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries`)).body;
      return first?.Status === 'failed'
        ? (await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${first.ID}`)).body
        : null;
    });
    expect(d.Attempts).toEqual([expect.objectContaining({ Number: 1, StatusCode: null, Error: 'blocked_address' })]);
    expect(t.sink.received).toHaveLength(0);
  });
});
