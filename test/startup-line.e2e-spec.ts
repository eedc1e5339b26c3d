import { request } from 'undici';
import { ServiceProcess } from './helpers/service-process';
import { useTestEnv } from './helpers/use-service';

/** The start-up line gives the address to call as a URL that works, copied as it stands. */
describe('the start-up line', () => {
  const env = useTestEnv();

  it('brackets an IPv6 HOST in the URL it prints', async () => {
    const svc = env.adopt(await ServiceProcess.start({ ...env.vars, HOST: '::1', PORT: '0', ROLE: 'api' }));
    const url = /listening on (http:\/\/\S+)/.exec(svc.output)?.[1];
    expect(url).toBe(`http://[::1]:${svc.port}`);
    const health = await request(`${url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.text();
  });

  it('takes short credentials (the configuration sets no length) and says they are easy to guess', async () => {
    const credentials = { GATEWAY_SECRET: 'gw', ADMIN_SECRET: 'admin-secret', PORTAL_API_TOKEN: 'portal-token' };
    const svc = env.adopt(await ServiceProcess.start({ ...env.vars, ...credentials, PORT: '0', ROLE: 'api' }));
    for (const name of Object.keys(credentials))
      expect(svc.output).toContain(`${name}: shorter than 16 characters, easy to guess`);
    const base = `http://127.0.0.1:${svc.port}`;
    const calls: ['GET' | 'POST', string, string, string][] = [
      ['GET', '/gateway/apis/oas/nope', 'x-gateway-authorization', 'gw'],
      ['POST', '/admin/users', 'admin-auth', 'admin-secret'],
      ['GET', '/portal-api/apps/1', 'authorization', 'portal-token'],
    ];
    for (const [method, path, header, credential] of calls) {
      const call = (value: string) =>
        request(base + path, {
          method,
          headers: { [header]: value, 'content-type': 'application/json' },
          body: method === 'POST' ? '{}' : undefined,
        });
      const [allowed, refused] = [await call(credential), await call('g')];
      await Promise.all([allowed.body.text(), refused.body.text()]);
      // each opens its own family: the route answers (not found, or the body refused), not the family's refusal
      expect([method, path, refused.statusCode]).toEqual([method, path, path.startsWith('/gateway') ? 403 : 401]);
      expect([method, path, allowed.statusCode]).toEqual([method, path, method === 'POST' ? 400 : 404]);
    }
  });
});
