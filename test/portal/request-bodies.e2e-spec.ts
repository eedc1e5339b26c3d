import { createAccessRequest, createApp, createWebhook } from '../helpers/portal';
import { useService } from '../helpers/use-service';

const NOT_AN_OBJECT = 'body: Validation failed (object is expected)';

/**
 * A portal route that takes a body takes a JSON object: `null` is no more "no change" than `[]` or `5` is. Read
 * from /docs-json, so that a route added later is held to it too: a body the document calls required may not be
 * left out, one it calls optional may.
 */
describe('portal request bodies', () => {
  // role api: nothing is ever delivered to the webhooks made here
  const t = useService({ vars: { ROLE: 'api' } });
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const app = await createApp(t.portal, { Name: 'Bodies', RedirectURLs: 'https://a.example/cb' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID });
    const hook = await createWebhook(t.portal, { URL: 'http://127.0.0.1:9/h', Headers: [{ Name: 'X-A', Value: 'b' }] });
    ids.app = String(app.ID);
    ids.accessRequest = String(ar.ID);
    ids.webhook = hook.ID;
    ids.header = hook.Headers[0].ID;
  });

  /** Every portal operation with a request body, its path filled with rows that exist. */
  async function bodyRoutes(): Promise<{ method: string; path: string; required: boolean }[]> {
    const doc = (await t.http.get('/docs-json')).body;
    const out = [];
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      if (!path.startsWith('/portal-api/')) continue;
      for (const [method, op] of Object.entries<any>(item)) {
        if (!op.requestBody) continue;
        const id = path.startsWith('/portal-api/apps')
          ? ids.app
          : path.startsWith('/portal-api/access_requests')
            ? ids.accessRequest
            : ids.webhook;
        out.push({
          method: method.toUpperCase(),
          path: path.replace('{id}', id).replace('{headerId}', ids.header),
          required: op.requestBody.required !== false,
        });
      }
    }
    return out;
  }

  it('refuses a JSON null body with the 422 that any other body but an object gets', async () => {
    const routes = await bodyRoutes();
    expect(routes.length).toBeGreaterThanOrEqual(12);
    for (const { method, path } of routes) {
      for (const raw of ['null', '[]', '5', '"s"', 'true']) {
        const res = await t.portal.send(method, path, { raw });
        expect({ method, path, raw, status: res.status, body: res.body }).toEqual({
          method,
          path,
          raw,
          status: 422,
          body: { status: 'error', errors: [NOT_AN_OBJECT] },
        });
      }
    }
  });

  it('refuses a missing body where the body is required, and takes it where it is optional', async () => {
    const routes = await bodyRoutes();
    expect(routes.filter((r) => !r.required).map((r) => r.path)).toEqual([
      `/portal-api/webhooks/${ids.webhook}/secret/rotate`,
      `/portal-api/webhooks/${ids.webhook}/test`,
    ]);
    for (const { method, path, required } of routes) {
      // no body at all, and an empty one sent as JSON: the same thing
      for (const empty of [{}, { raw: '' }]) {
        const res = await t.portal.send(method, path, empty);
        const seen = { method, path, empty, status: res.status, body: res.body };
        if (required)
          expect(seen).toEqual({
            ...seen,
            status: 422,
            body: { status: 'error', errors: ['body is required: a JSON object'] },
          });
        else expect({ ...seen, ok: res.status >= 200 && res.status < 300 }).toEqual({ ...seen, ok: true });
      }
    }
  });

  it('changes nothing when PUT or a rotation is sent null', async () => {
    const app = `/portal-api/apps/${ids.app}`;
    const before = (await t.portal.get(app)).body;
    const [{ updated_at: appUpdated }] = await t.db.query(`SELECT updated_at FROM portal_apps WHERE id = $1`, [
      ids.app,
    ]);
    expect((await t.portal.send('PUT', app, { raw: 'null' })).status).toBe(422);
    expect((await t.portal.get(app)).body).toEqual(before);
    const [{ updated_at: appAfter }] = await t.db.query(`SELECT updated_at FROM portal_apps WHERE id = $1`, [ids.app]);
    expect(appAfter).toEqual(appUpdated);

    const hook = `/portal-api/webhooks/${ids.webhook}`;
    const secret = (await t.portal.get(`${hook}/secret`)).body;
    expect((await t.portal.send('POST', `${hook}/secret/rotate`, { raw: 'null' })).status).toBe(422);
    expect((await t.portal.get(`${hook}/secret`)).body).toEqual(secret);
    const [{ count }] = await t.db.query(
      `SELECT count(*)::int AS count FROM webhook_deliveries WHERE webhook_id = $1`,
      [ids.webhook],
    );
    expect((await t.portal.send('POST', `${hook}/test`, { raw: 'null' })).status).toBe(422);
    const [{ count: after }] = await t.db.query(
      `SELECT count(*)::int AS count FROM webhook_deliveries WHERE webhook_id = $1`,
      [ids.webhook],
    );
    expect(after).toBe(count);
  });
});
