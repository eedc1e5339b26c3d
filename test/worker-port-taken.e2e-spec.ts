import { deliveryCount, emitEvent } from './helpers/events';
import { eventually } from './helpers/eventually';
import { createWebhook } from './helpers/portal';
import { ServiceProcess } from './helpers/service-process';
import { closeAfterEach } from './helpers/use-fixture';
import { startService } from './helpers/use-service';

/**
 * A worker's HTTP serves only /health and /metrics: a worker whose PORT is taken (one more on a machine, or one given
 * the API's PORT by a rig that sets one PORT for every process) runs without them, and says so, rather than not at all.
 */
describe('a worker whose PORT is taken', () => {
  const closer = closeAfterEach();

  it('runs without its HTTP endpoints, saying so, and delivers', async () => {
    const api = closer.adopt(await startService({ vars: { ROLE: 'api' }, receiver: true }));
    const port = new URL(api.baseUrl).port;
    const webhook = (await createWebhook(api.portal, { Name: 'w', URL: api.sink.url() })).ID;
    const worker = closer.adopt(await ServiceProcess.start({ ...api.env.vars, ROLE: 'worker', PORT: port }));
    expect(worker.output).toContain(
      `role worker running without /health and /metrics: 127.0.0.1:${port} is taken (give it a PORT of its own)`,
    );
    await emitEvent(api, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });
    await eventually(async () => (await deliveryCount(api, webhook, 'delivered')) === 1, 30_000, 'the delivery');
    // the API's port is still the API's
    expect((await api.http.get('/health')).status).toBe(200);
    // and it stops as any worker does, of the signal
    expect(await worker.signalAndWait('SIGTERM')).toBeNull();
  });

  it('is still refused to an API, whose routes are the point of it', async () => {
    const api = closer.adopt(await startService({ vars: { ROLE: 'api' } }));
    const port = new URL(api.baseUrl).port;
    await expect(ServiceProcess.start({ ...api.env.vars, ROLE: 'api', PORT: port })).rejects.toThrow(
      `failed to start: listening on 127.0.0.1:${port} (HOST, PORT): listen EADDRINUSE`,
    );
  });
});
