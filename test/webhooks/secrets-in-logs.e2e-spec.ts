import { SecretBox } from '../../src/common/crypto/secret-box';
import { loadConfig } from '../../src/config/app-config';
import { HttpClient } from '../helpers/http-client';
import { ServiceProcess } from '../helpers/service-process';
import { Sink } from '../helpers/sink';
import { TEST_SECRETS } from '../helpers/test-env';
import { useTestEnv } from '../helpers/use-service';
import { withAdminClient } from '../setup/test-infra';
import { eventually } from '../helpers/eventually';

describe('secrets stay out of the logs', () => {
  const env = useTestEnv({ LOG_LEVEL: 'debug', WEBHOOK_RETRY_SCHEDULE: '0,1' });
  let service: ServiceProcess;
  let sink: Sink;

  beforeAll(async () => {
    sink = env.adopt(await Sink.start());
    service = env.adopt(await ServiceProcess.start({ ...env.vars, ROLE: 'all' }));
  });

  it('logs at debug level without any signing key, header value or credential, through creation, rotation, test sends and retries', async () => {
    const api = new HttpClient(`http://127.0.0.1:${service.port}`, { authorization: TEST_SECRETS.PORTAL_API_TOKEN });
    let first = true;
    sink.responder = () => (first ? ((first = false), { status: 500 }) : { status: 200 });
    const shown: string[] = [];
    const ids: string[] = [];
    for (const SignatureScheme of ['v1', 'v1a']) {
      const w = await api.post('/portal-api/webhooks', {
        Name: `logs ${SignatureScheme}`,
        URL: sink.url(`/${SignatureScheme}`),
        Events: ['AccessRequestApproved'],
        SignatureScheme,
        Headers: [{ Name: 'X-Api-Key', Value: 'header-value-that-is-a-secret' }],
      });
      expect(w.status).toBe(201);
      ids.push(w.body.ID);
      shown.push(w.body.Secret);
      const rotated = await api.post(`/portal-api/webhooks/${w.body.ID}/secret/rotate`, { GracePeriodSeconds: 600 });
      expect(rotated.status).toBe(200);
      shown.push(rotated.body.Secret, (await api.get(`/portal-api/webhooks/${w.body.ID}/secret`)).body.Secret);
      expect((await api.post(`/portal-api/webhooks/${w.body.ID}/test`, { Note: 'logs' })).status).toBe(202);
      expect(
        (
          await api.put(`/portal-api/webhooks/${w.body.ID}`, {
            SignatureScheme: SignatureScheme === 'v1' ? 'v1a' : 'v1',
          })
        ).status,
      ).toBe(200);
    }
    // one attempt fails and is retried; both test deliveries end up delivered
    await sink.waitFor((r) => r.length >= 3, 20_000, 'the test deliveries and a retry');
    await eventually(
      async () => {
        const all = await Promise.all(
          ids.map(async (id) => (await api.get(`/portal-api/webhooks/${id}/deliveries`)).body[0]?.Status),
        );
        return all.every((s) => s === 'delivered');
      },
      20_000,
      'both test deliveries delivered',
    );

    // every key the service holds, as it stores them (current and previous, private keys included)
    const box = new SecretBox(loadConfig(env.vars));
    const rows: { secret_encrypted: string; previous_secret_encrypted: string | null }[] = await withAdminClient(
      env.databaseUrl,
      async (c) => (await c.query(`SELECT secret_encrypted, previous_secret_encrypted FROM webhooks`)).rows,
    );
    const keys = rows
      .flatMap((r) => [r.secret_encrypted, r.previous_secret_encrypted])
      .filter((s): s is string => !!s)
      .map((s) => box.decrypt(s));
    expect(keys.filter((k) => k.startsWith('whsk_')).length).toBeGreaterThanOrEqual(2);
    const secrets = [...keys, ...shown.filter((s) => s.startsWith('whsec_'))].flatMap((k) => [
      k,
      k.replace(/^wh(sec|sk)_/, ''),
    ]);
    const signatures = sink.received.flatMap((r) =>
      String(r.headers['webhook-signature'])
        .split(' ')
        .map((s) => s.split(',')[1]),
    );

    const log = service.output;
    // the capture works and covers what happened
    expect(log).toContain('"level":20');
    expect(log).toContain('delivery signed');
    expect(log).toContain('webhook signing key rotated');
    expect(log).toContain('/secret/rotate');
    for (const s of [
      ...secrets,
      ...signatures,
      'header-value-that-is-a-secret',
      TEST_SECRETS.PORTAL_API_TOKEN,
      TEST_SECRETS.ENCRYPTION_KEY,
    ]) {
      expect(log.includes(s) ? `log contains ${s.slice(0, 12)}...` : 'clean').toBe('clean');
    }
    expect(log).not.toMatch(/whsec_|whsk_/);
  });
});
