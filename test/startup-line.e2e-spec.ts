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
});
