import { startTestApp, TestApp } from '../helpers/test-app';
import { TEST_SECRETS } from '../helpers/test-env';

const BLOCKED = /WEBHOOK_ALLOWED_CIDRS does not allow.*blocked_address/;

describe('webhook target warnings', () => {
  describe('with loopback outside the allow-list', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ vars: { WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8' } });
    });
    afterAll(() => t.close());
    const api = () => t.http.with({ authorization: TEST_SECRETS.PORTAL_API_TOKEN });

    it('creates a webhook to a loopback literal with 201 and a warning that its deliveries will be blocked', async () => {
      const res = await api().post('/portal-api/webhooks', {
        Name: 'local',
        URL: 'http://127.0.0.1:8080/hooks',
        Events: ['AccessRequestApproved'],
      });
      expect(res.status).toBe(201);
      expect(res.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      expect(res.body.Warnings[0]).toContain('127.0.0.1');
      expect(res.body.Secret).toMatch(/^whsec_/);
      // the warning is about this write only: reading the webhook back shows the stored fields
      expect((await api().get(`/portal-api/webhooks/${res.body.ID}`)).body).not.toHaveProperty('Warnings');
    });

    it('warns about localhost and IPv6 loopback too', async () => {
      for (const URL of ['http://localhost:8080/hooks', 'http://[::1]:8080/hooks']) {
        const res = await api().post('/portal-api/webhooks', { Name: 'local', URL, Events: ['AccessRequestApproved'] });
        expect(res.status).toBe(201);
        expect(res.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      }
    });

    it('leaves Warnings out for an address the allow-list opens or a public hostname', async () => {
      for (const URL of ['http://10.1.2.3/hooks', 'https://crm.example.com/hooks']) {
        const res = await api().post('/portal-api/webhooks', { Name: 'ok', URL, Events: ['AccessRequestApproved'] });
        expect(res.status).toBe(201);
        expect(res.body).not.toHaveProperty('Warnings');
      }
    });

    it('warns on update when the stored or new URL is blocked, and stops once it is not', async () => {
      const created = (
        await api().post('/portal-api/webhooks', {
          Name: 'moving',
          URL: 'https://crm.example.com/hooks',
          Events: ['AccessRequestApproved'],
        })
      ).body;
      const toLoopback = await api().put(`/portal-api/webhooks/${created.ID}`, { URL: 'http://127.0.0.1:9000/hooks' });
      expect(toLoopback.status).toBe(200);
      expect(toLoopback.body.URL).toBe('http://127.0.0.1:9000/hooks');
      expect(toLoopback.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      // an update that leaves the URL alone still reports it: the configuration is what blocks it
      const rename = await api().put(`/portal-api/webhooks/${created.ID}`, { Name: 'renamed' });
      expect(rename.body.Warnings).toEqual([expect.stringMatching(BLOCKED)]);
      const back = await api().put(`/portal-api/webhooks/${created.ID}`, { URL: 'http://10.9.9.9/hooks' });
      expect(back.body).not.toHaveProperty('Warnings');
    });
  });

  describe('with loopback allowed (local development)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ vars: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' } });
    });
    afterAll(() => t.close());

    it('leaves Warnings out for a loopback receiver', async () => {
      const res = await t.http.with({ authorization: TEST_SECRETS.PORTAL_API_TOKEN }).post('/portal-api/webhooks', {
        Name: 'local',
        URL: 'http://127.0.0.1:8080/hooks',
        Events: ['AccessRequestApproved'],
      });
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('Warnings');
    });
  });
});
