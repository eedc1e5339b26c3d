import { Service, useService } from '../helpers/use-service';

const BLOCKED = /WEBHOOK_ALLOWED_CIDRS does not allow.*blocked_address/;

/** POST /portal-api/webhooks of a webhook to `URL`, as its answer. */
const createHook = (t: Service, URL: string, Name = 'local') =>
  t.portal.post('/portal-api/webhooks', { Name, URL, Events: ['AccessRequestApproved'] });

describe('webhook target warnings', () => {
  describe('with loopback outside the allow-list', () => {
    const t = useService({ vars: { WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8' } });

    it('creates a webhook to a loopback literal with 201 and a warning that its deliveries will be blocked', async () => {
      const res = await createHook(t, 'http://127.0.0.1:8080/hooks');
      expect(res.status).toBe(201);
      expect(res.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      expect(res.body.Warnings[0]).toContain('127.0.0.1');
      expect(res.body.Secret).toMatch(/^whsec_/);
      // the warning is about this write only: reading the webhook back shows the stored fields
      expect((await t.portal.get(`/portal-api/webhooks/${res.body.ID}`)).body).not.toHaveProperty('Warnings');
    });

    it('warns about localhost and IPv6 loopback too', async () => {
      for (const URL of ['http://localhost:8080/hooks', 'http://[::1]:8080/hooks']) {
        const res = await createHook(t, URL);
        expect(res.status).toBe(201);
        expect(res.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      }
    });

    it('leaves Warnings out for an address the allow-list opens or a public hostname', async () => {
      for (const URL of ['http://10.1.2.3/hooks', 'https://crm.example.com/hooks']) {
        const res = await createHook(t, URL, 'ok');
        expect(res.status).toBe(201);
        expect(res.body).not.toHaveProperty('Warnings');
      }
    });

    it('warns on update when the stored or new URL is blocked, and stops once it is not', async () => {
      const created = (await createHook(t, 'https://crm.example.com/hooks', 'moving')).body;
      const toLoopback = await t.portal.put(`/portal-api/webhooks/${created.ID}`, {
        URL: 'http://127.0.0.1:9000/hooks',
      });
      expect(toLoopback.status).toBe(200);
      expect(toLoopback.body.URL).toBe('http://127.0.0.1:9000/hooks');
      expect(toLoopback.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      // an update that leaves the URL alone still reports it: the configuration is what blocks it
      const rename = await t.portal.put(`/portal-api/webhooks/${created.ID}`, { Name: 'renamed' });
      expect(rename.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      const back = await t.portal.put(`/portal-api/webhooks/${created.ID}`, { URL: 'http://10.9.9.9/hooks' });
      expect(back.body).not.toHaveProperty('Warnings');
    });
  });

  describe('with loopback allowed (local development)', () => {
    const t = useService({ vars: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' } });

    it('leaves Warnings out for a loopback receiver', async () => {
      const res = await createHook(t, 'http://127.0.0.1:8080/hooks');
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('Warnings');
    });
  });
});
