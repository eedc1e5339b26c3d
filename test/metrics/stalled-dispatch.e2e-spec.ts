import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { ServiceProcess } from '../helpers/service-process';
import { useService } from '../helpers/use-service';

/** The value of an unlabelled gauge in a Prometheus text exposition (NaN when it is absent). */
function gauge(text: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

const MESSAGE = { ID: 1, AppID: 1, UserID: 1, Status: 'approved' };

/**
 * The two gauges the shipped alerts (deploy/prometheus/alerts.yml) watch to tell a dispatch that stalled: the age of
 * the oldest event no relay has taken, and how long the most overdue delivery has been due with nothing sending it.
 * An API process runs neither the relay nor a worker, so here the work waits until a worker process starts.
 */
describe('the gauges of a stalled dispatch, read by an API process', () => {
  const t = useService({ vars: { ROLE: 'api' }, receiver: true });
  const metrics = async () => (await t.http.get('/metrics')).text;

  it('grow while no worker runs, and fall back to 0 once one relays and sends', async () => {
    const hook = await t.webhook();
    const before = await metrics();
    expect(gauge(before, 'outbox_oldest_unrelayed_event_age_seconds')).toBe(0);
    expect(gauge(before, 'webhook_oldest_overdue_delivery_seconds')).toBe(0);
    expect(before).toMatch(/^# TYPE outbox_oldest_unrelayed_event_age_seconds gauge$/m);
    expect(before).toMatch(/^# TYPE webhook_oldest_overdue_delivery_seconds gauge$/m);

    // no relay in an API process: the event waits, and its age grows
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    const waiting = await eventually(
      async () => {
        const text = await metrics();
        return gauge(text, 'outbox_oldest_unrelayed_event_age_seconds') >= 1 && text;
      },
      10_000,
      'the unrelayed event to be a second old',
    );
    expect(gauge(waiting, 'outbox_unrelayed_events')).toBe(1);
    expect(gauge(waiting, 'webhook_oldest_overdue_delivery_seconds')).toBe(0);

    // a worker relays it and sends the delivery: nothing waits any more
    const worker = t.adopt(await ServiceProcess.start({ ...t.env.vars, ROLE: 'worker' }));
    await t.sink.waitFor((got) => got.some((r) => r.url === hook.path), 20_000, 'the delivery');
    await eventually(
      async () => {
        const text = await metrics();
        return (
          gauge(text, 'outbox_oldest_unrelayed_event_age_seconds') === 0 &&
          gauge(text, 'webhook_oldest_overdue_delivery_seconds') === 0
        );
      },
      10_000,
      'both gauges back to 0',
    );

    // with the worker gone, a redelivery by hand is due at once and nothing takes it: how long it has been due grows
    await worker.close();
    const [delivery] = (await t.portal.get(`/portal-api/webhooks/${hook.ID}/deliveries`)).body;
    const redelivered = await t.portal.post(`/portal-api/webhooks/${hook.ID}/deliveries/${delivery.ID}/redeliver`, {});
    expect(redelivered.status).toBe(200);
    await eventually(
      async () => gauge(await metrics(), 'webhook_oldest_overdue_delivery_seconds') >= 1,
      10_000,
      'the redelivery to be a second overdue',
    );
    expect(gauge(await metrics(), 'outbox_oldest_unrelayed_event_age_seconds')).toBe(0);
  }, 60_000);
});
