import { createAccessRequest, createApp, createWebhook } from './helpers/portal';
import { seedUser } from './helpers/dashboard';
import { useService } from './helpers/use-service';

/** Spellings that JavaScript's Number() would read as 1 (or as the id), but that are not the id's digits. */
const NOT_THE_DIGITS = (id: number | string) => [
  `%20${id}`,
  `${id}%20`,
  `%09${id}`,
  `0${id}`,
  `+${id}`,
  `${id}.0`,
  `${id}e0`,
  `%0A${id}`,
];

describe('an id is exactly its digits', () => {
  const t = useService();

  it('an application is named only by its digits: GET, PUT and DELETE of any other spelling are a 404 and change nothing', async () => {
    const app = await createApp(t.portal, { Name: 'Keep me' });
    for (const spelling of [...NOT_THE_DIGITS(app.ID), '0x1', '1e0']) {
      for (const [method, body] of [['GET'], ['PUT', { Name: 'Changed' }], ['DELETE']] as const) {
        const res = await t.portal.send(method, `/portal-api/apps/${spelling}`, { body });
        expect([spelling, method, res.status, res.body]).toEqual([
          spelling,
          method,
          404,
          { status: 'error', errors: ['Application not found'] },
        ]);
      }
    }
    // a NUL cannot be stored or named: refused as input, but never app 1 either
    const nul = await t.portal.delete(`/portal-api/apps/${app.ID}%00`);
    expect(nul.status).toBeGreaterThanOrEqual(400);
    expect(nul.status).toBeLessThan(500);
    const still = await t.portal.get(`/portal-api/apps/${app.ID}`);
    expect(still.status).toBe(200);
    expect(still.body.Name).toBe('Keep me');
  });

  it('an access request likewise', async () => {
    const app = await createApp(t.portal, { Name: 'AR owner' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID });
    for (const spelling of NOT_THE_DIGITS(ar.ID)) {
      for (const [method, path] of [
        ['GET', ''],
        ['PUT', '/approve'],
        ['PUT', '/reject'],
        ['DELETE', ''],
      ] as const) {
        const res = await t.portal.send(method, `/portal-api/access_requests/${spelling}${path}`);
        expect([spelling, method, path, res.status]).toEqual([spelling, method, path, 404]);
      }
    }
    const still = await t.portal.get(`/portal-api/access_requests/${ar.ID}`);
    expect(still.body.Status).toBe('pending');
  });

  it('webhook and header ids (UUIDs) and dashboard user ids are matched exactly too', async () => {
    const hook = await createWebhook(t.portal, { URL: 'http://127.0.0.1:9/h', Headers: [{ Name: 'X-A', Value: 'b' }] });
    const header = (await t.portal.get(`/portal-api/webhooks/${hook.ID}/headers`)).body[0];
    for (const spelling of [
      `%20${hook.ID}`,
      `${hook.ID}%20`,
      hook.ID.toUpperCase(),
      `{${hook.ID}}`,
      hook.ID.replace(/-/g, ''),
    ]) {
      const res = await t.portal.delete(`/portal-api/webhooks/${spelling}`);
      expect([spelling, res.status]).toEqual([spelling, 404]);
    }
    for (const spelling of [`%20${header.ID}`, `${header.ID}%20`]) {
      const res = await t.portal.delete(`/portal-api/webhooks/${hook.ID}/headers/${spelling}`);
      expect([spelling, res.status]).toEqual([spelling, 404]);
    }
    expect((await t.portal.get(`/portal-api/webhooks/${hook.ID}/headers/${header.ID}`)).status).toBe(200);

    const admin = await seedUser(t, { org: '' });
    const victim = await seedUser(t, { org: 'acme' });
    for (const spelling of [`%20${victim.id}`, `${victim.id}%20`, victim.id.toUpperCase()]) {
      const res = await admin.http.delete(`/api/users/${spelling}`);
      expect([spelling, res.status]).toEqual([spelling, 404]);
    }
    expect((await admin.http.get(`/api/users/${victim.id}`)).status).toBe(200);
  });
});
