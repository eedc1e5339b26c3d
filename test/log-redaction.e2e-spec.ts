import { request } from 'undici';
import { ServiceProcess } from './helpers/service-process';
import { TEST_SECRETS } from './helpers/test-env';
import { useTestEnv } from './helpers/use-service';

/** The service as `npm start` runs it, logging at info: what a caller puts in a query string never reaches the log. */
describe('credentials in query strings stay out of the log', () => {
  const env = useTestEnv();
  let svc: ServiceProcess;

  beforeAll(async () => {
    svc = env.adopt(await ServiceProcess.start({ ...env.vars, LOG_LEVEL: 'info', ROLE: 'api' }));
  });

  it('logs each request with its path, and its query string only as [redacted]', async () => {
    const secret = 'qs-credential-3f9a1c77e0b24d55';
    const base = `http://127.0.0.1:${svc.port}`;
    const urls = [
      `/portal-api/apps?authorization=${secret}`,
      `/gateway/apis/oas?access_key=${secret}&x=1`,
      `/api/apis?p=1&authorization=Bearer%20${secret}`,
      `/admin/users?${secret}`,
      `/nowhere?token=${secret}`,
      `/portal-api/apps/1?access_key=${secret}`,
    ];
    for (const u of urls) {
      const res = await request(base + u, { headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN } });
      await res.body.text();
    }
    // pino writes asynchronously: wait until the last request is in the log
    for (let i = 0; i < 50 && !svc.output.includes('"/portal-api/apps/1?[redacted]"'); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(svc.output).toContain('"url":"/portal-api/apps?[redacted]"');
    expect(svc.output).toContain('"url":"/gateway/apis/oas?[redacted]"');
    expect(svc.output).toContain('"url":"/portal-api/apps/1?[redacted]"');
    expect(svc.output).not.toContain(secret);
    expect(svc.output).not.toContain(TEST_SECRETS.PORTAL_API_TOKEN);
  });
});
