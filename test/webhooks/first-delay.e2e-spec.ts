import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { createWebhook } from '../helpers/portal';
import { Sink } from '../helpers/sink';
import { useService } from '../helpers/use-service';

/**
 * WEBHOOK_RETRY_SCHEDULE gives the delay before each attempt, the first included: `2,1` sends the first attempt
 * about 2 s after the event and the second about 1 s after the first. A test send goes at once whatever the schedule.
 */
describe('the first entry of the retry schedule', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '2,1' } });
  let sink: Sink;
  beforeEach(async () => {
    sink = await Sink.start();
  });
  afterEach(() => sink.close());

  const log = (webhookId: string) => t.portal.get(`/portal-api/webhooks/${webhookId}/deliveries`);
  const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

  it('delays the first attempt by it, then retries by the rest', async () => {
    sink.responder = () => ({ status: 500 });
    const w = await createWebhook(t.portal, { URL: sink.url() });
    const emitted = Date.now();
    await emitEvent(t, 'AccessRequestApproved', { ID: 1, AppID: 1, UserID: 1, Status: 'approved' });
    const [pending] = await eventually(
      async () => ((await log(w.ID)).body.length ? (await log(w.ID)).body : null),
      10_000,
      'the delivery',
    );
    expect(pending.Status).toBe('pending');
    expect(pending.AttemptCount).toBe(0);
    // 2 s ±20 %
    expect(seconds(pending.CreatedAt, pending.NextAttemptAt)).toBeGreaterThanOrEqual(1.5);
    expect(seconds(pending.CreatedAt, pending.NextAttemptAt)).toBeLessThanOrEqual(2.5);

    await sink.waitFor((r) => r.length >= 2, 20_000, 'both attempts');
    expect(sink.received[0].at - emitted).toBeGreaterThanOrEqual(1500);
    expect(sink.received[1].at - sink.received[0].at).toBeGreaterThanOrEqual(750);
    const failed = await eventually(
      async () => {
        const [d] = (await log(w.ID)).body;
        return d.Status === 'failed' ? d : null;
      },
      10_000,
      'the failed delivery',
    );
    expect(failed.AttemptCount).toBe(2);
  });

  it('sends a test at once', async () => {
    const w = await createWebhook(t.portal, { URL: sink.url() });
    const sent = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, {});
    expect(sent.status).toBe(202);
    const d = (await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${sent.body.DeliveryID}`)).body;
    expect(seconds(d.CreatedAt, d.NextAttemptAt ?? d.UpdatedAt)).toBeLessThan(1);
    await sink.waitFor((r) => r.length >= 1, 20_000, 'the test delivery');
  });
});
