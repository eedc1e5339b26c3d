import { GATEWAY, oasDoc } from '../helpers/dashboard';
import { useService } from '../helpers/use-service';

/**
 * A burst of gateway writes on a process that has validated nothing yet (its validation threads start with the
 * burst): every document waits its turn and is added. A client racing its own writes, or a pipeline importing
 * its APIs, is not told the service is busy.
 */
describe('gateway: a burst of writes on a fresh process', () => {
  // the in-process app is that process (the burst is sent to it): an API role alone, no other process beside it
  const t = useService({ vars: { ROLE: 'api' } });

  it('adds forty documents sent at once, each once', async () => {
    const gw = t.http.with(GATEWAY);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => gw.post('/gateway/apis/oas', oasDoc({ name: `Burst ${i}` }))),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const keys = new Set(answers.map((a) => a.body.key));
    expect(keys.size).toBe(40);
    const list = await gw.get('/gateway/apis/oas');
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(40);
  });
});
