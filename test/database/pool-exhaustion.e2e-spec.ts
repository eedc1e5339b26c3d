import { request } from 'undici';
import { ServiceProcess } from '../helpers/service-process';
import { TEST_SECRETS } from '../helpers/test-env';
import { useTestEnv } from '../helpers/use-service';

/**
 * A process that has just started, met at once by more concurrent writes than its pool has connections (20): each
 * holds a connection in its transaction while it writes its event. Nothing a write does on the way may wait for
 * one more connection of the same pool (the list of day partitions, read on first use, once did: every write then
 * waited for ever, and so did every later request).
 */
describe('a fresh API process under a burst of writes', () => {
  const env = useTestEnv();

  it('commits all of 60 concurrent writes sent as it starts listening, and the next ones', async () => {
    const svc = env.adopt(await ServiceProcess.start({ ...env.vars, ROLE: 'api' }));
    const burst = () =>
      Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          const res = await request(`http://127.0.0.1:${svc.port}/portal-api/apps`, {
            method: 'POST',
            headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN, 'content-type': 'application/json' },
            body: JSON.stringify({ Name: `burst ${i}` }),
            headersTimeout: 30_000,
          });
          await res.body.text();
          return res.statusCode;
        }),
      );
    for (let round = 0; round < 2; round++) expect(await burst()).toEqual(Array.from({ length: 60 }, () => 200));
  });
});
