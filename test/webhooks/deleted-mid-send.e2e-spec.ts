import { request } from 'undici';
import { webhookRows } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { ServiceProcess } from '../helpers/service-process';
import { Sink } from '../helpers/sink';
import { TEST_SECRETS } from '../helpers/test-env';
import { useTestEnv } from '../helpers/use-service';

/**
 * A webhook deleted while one of its deliveries is being sent: the answer that comes back is recorded on the
 * delivery if the purge has not yet removed it, or dropped if it has, and the log then says so, rather than blaming
 * a takeover by another worker that never happened. Either way the purge leaves nothing of it.
 */
describe('a webhook deleted while its delivery is being sent', () => {
  const env = useTestEnv();

  it('never calls it a takeover, and leaves nothing of the webhook', async () => {
    const sink = env.adopt(await Sink.start());
    sink.responder = () => ({ status: 200, delayMs: 1500 });
    const svc = env.adopt(await ServiceProcess.start({ ...env.vars, LOG_LEVEL: 'info', ROLE: 'all' }));
    const call = async (method: 'POST' | 'DELETE', path: string, body?: unknown) => {
      const res = await request(`http://127.0.0.1:${svc.port}${path}`, {
        method,
        headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.statusCode, body: await res.body.json() };
    };
    const w = await call('POST', '/portal-api/webhooks', {
      Name: 'to be deleted',
      URL: sink.url('/hook'),
      Events: ['ApplicationRegistered'],
    });
    expect(w.status).toBe(201);
    expect((await call('POST', '/portal-api/apps', { Name: 'app', UserID: 1 })).status).toBe(200);
    await sink.waitFor((r) => r.length >= 1, 20_000, 'the delivery');
    const id = (w.body as { ID: string }).ID;
    expect((await call('DELETE', `/portal-api/webhooks/${id}`)).status).toBe(200);

    const db = await env.client();
    const none = { webhooks: 0, headers: 0, kept: 0, deliveries: 0, attempts: 0 };
    const left = () => webhookRows({ query: async (text, params) => (await db.query(text, params)).rows }, id);
    await eventually(
      async () => JSON.stringify(await left()) === JSON.stringify(none) || null,
      30_000,
      "the purge of the webhook's history",
    );
    // the answer (1.5 s after the request) has come back by then, recorded or not
    await new Promise((r) => setTimeout(r, 1500));
    expect(await left()).toEqual(none);
    expect(svc.output).not.toContain('late answer of a delivery taken over');
  });
});
