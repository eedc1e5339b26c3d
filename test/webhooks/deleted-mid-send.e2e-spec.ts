import { request } from 'undici';
import { ServiceProcess } from '../helpers/service-process';
import { Sink } from '../helpers/sink';
import { TEST_SECRETS } from '../helpers/test-env';
import { useTestEnv } from '../helpers/use-service';

/**
 * A webhook deleted while one of its deliveries is being sent: the answer that comes back has nothing to be
 * recorded on, and the log says so, rather than blaming a takeover by another worker that never happened.
 */
describe('a webhook deleted while its delivery is being sent', () => {
  const env = useTestEnv();

  it('logs the unrecorded attempt as the deletion it is', async () => {
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
    expect((await call('DELETE', `/portal-api/webhooks/${(w.body as { ID: string }).ID}`)).status).toBe(200);

    const said = 'the webhook was deleted while its delivery was being sent: the attempt is not recorded';
    for (let i = 0; i < 100 && !svc.output.includes(said); i++) await new Promise((r) => setTimeout(r, 100));
    expect(svc.output).toContain(said);
    expect(svc.output).not.toContain('late answer of a delivery taken over');
  });
});
