import { emitEvent } from '../helpers/events';
import { eventually } from '../helpers/eventually';
import { createWebhook } from '../helpers/portal';
import { startTestApp } from '../helpers/test-app';
import { closeAfterEach } from '../helpers/use-fixture';
import { useService } from '../helpers/use-service';

/**
 * An event reaches the webhooks subscribed when it happened, however late the relay comes to it: the events below
 * are recorded while no worker runs, the webhooks change, and only then does a worker relay them. Before, the relay
 * judged each webhook as it was by then: a webhook unsubscribed meanwhile lost the event, and one subscribed
 * meanwhile got an event from before it asked for it.
 */
describe('an event goes to the webhooks subscribed when it happened', () => {
  // the API (no worker) for both tests; each test starts a worker on its database late, and stops it after
  const api = useService({ vars: { ROLE: 'api' }, receiver: true });
  const closer = closeAfterEach();
  const startWorker = async () => closer.adopt(await startTestApp({ env: api.env, vars: { ROLE: 'worker' } }));

  it('whatever their Events, Filter or Active became before a lagging relay took the event', async () => {
    const hook = async (path: string, extra: Record<string, unknown> = {}) =>
      (await createWebhook(api.portal, { Name: path, URL: api.sink.url(`/${path}`), ...extra })).ID;
    const put = async (id: string, body: Record<string, unknown>) =>
      expect((await api.portal.put(`/portal-api/webhooks/${id}`, body)).status).toBe(200);
    const hooks = {
      unsubscribed: await hook('unsubscribed'),
      subscribedLater: await hook('subscribedLater', { Events: ['AccessRequestRejected'] }),
      filteredLater: await hook('filteredLater'),
      unfilteredLater: await hook('unfilteredLater', { Filter: { path: 'Message.ID', eq: -1 } }),
      enabledLater: await hook('enabledLater', { Active: false }),
      offAndOn: await hook('offAndOn'),
      renamed: await hook('renamed'),
      deletedLater: await hook('deletedLater'),
    };

    await emitEvent(api, 'AccessRequestApproved', { ID: 1 });
    await new Promise((r) => setTimeout(r, 20)); // the changes come after the event, by the clock too
    await put(hooks.unsubscribed, { Events: ['AccessRequestRejected'] });
    await put(hooks.subscribedLater, { Events: ['AccessRequestApproved'] });
    await put(hooks.filteredLater, { Filter: { path: 'Message.ID', eq: -1 } });
    await put(hooks.unfilteredLater, { Filter: null });
    await put(hooks.enabledLater, { Active: true });
    await put(hooks.offAndOn, { Events: ['AccessRequestRejected'] });
    await put(hooks.offAndOn, { Events: ['AccessRequestApproved', 'AccessRequestRejected'] });
    await put(hooks.renamed, { Name: 'renamed again' });
    // deleted: no event goes to it any more, however subscribed it was when the event happened
    expect((await api.portal.delete(`/portal-api/webhooks/${hooks.deletedLater}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 20));
    await emitEvent(api, 'AccessRequestApproved', { ID: 2 });

    await startWorker();
    const expected = {
      unsubscribed: [1],
      subscribedLater: [2],
      filteredLater: [1],
      unfilteredLater: [2],
      enabledLater: [2],
      offAndOn: [1, 2],
      renamed: [1, 2],
      deletedLater: [],
    };
    const total = Object.values(expected).reduce((n, ids) => n + ids.length, 0);
    await api.sink.waitFor((r) => r.length >= total, 30_000, `${total} deliveries`);
    // and no more: every delivery made is delivered, after one attempt, so none is sent again
    const settled = async () => {
      const [row] = await api.db.query(
        `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
                (SELECT count(*)::int FROM webhook_delivery_attempts WHERE webhook_id = ANY($1)) AS attempts
           FROM webhook_deliveries WHERE webhook_id = ANY($1)`,
        [Object.values(hooks)],
      );
      return row.delivered === row.n && row.attempts >= row.n ? row : null;
    };
    const { n, attempts } = await eventually(settled, 15_000, 'the deliveries recorded as delivered');
    expect([n, attempts]).toEqual([total, total]);
    const got: Record<string, number[]> = Object.fromEntries(Object.keys(hooks).map((k) => [k, []]));
    for (const r of api.sink.received) got[r.url.slice(1)].push(JSON.parse(r.body).Message.ID);
    for (const ids of Object.values(got)) ids.sort();
    expect(got).toEqual(expected);
  }, 90_000);

  it('keeps a replaced subscription only while an unrelayed event may need it', async () => {
    const id = (await createWebhook(api.portal, { Name: 'h', URL: api.sink.url('/h') })).ID;
    const kept = async () =>
      (await api.db.query(`SELECT count(*)::int AS n FROM webhook_subscriptions_ended WHERE webhook_id = $1`, [id]))[0]
        .n as number;
    await api.portal.put(`/portal-api/webhooks/${id}`, { Events: ['AccessRequestRejected'] });
    expect(await kept()).toBe(1);
    // a change that leaves the subscription as it is keeps nothing
    await api.portal.put(`/portal-api/webhooks/${id}`, { Events: ['AccessRequestRejected'], Name: 'h2' });
    expect(await kept()).toBe(1);
    // an hour on, with an event still unrelayed from before: kept
    await api.db.query(`UPDATE webhook_subscriptions_ended SET valid_until = valid_until - interval '2 hours'`);
    await api.db.query(`UPDATE webhooks SET subscription_changed_at = subscription_changed_at - interval '2 hours'`);
    const event = await emitEvent(api, 'AccessRequestRejected', { ID: 1 });
    await api.db.query(`UPDATE outbox_events SET occurred_at = now() - interval '3 hours' WHERE id = $1`, [event]);
    await api.portal.put(`/portal-api/webhooks/${id}`, { Active: false });
    expect(await kept()).toBe(2);
    // once it is relayed, the next change lets the old one go
    await api.db.query(`UPDATE outbox_events SET relayed_at = now() WHERE relayed_at IS NULL`);
    await api.portal.put(`/portal-api/webhooks/${id}`, { Active: true });
    expect(await kept()).toBe(2); // the oldest removed, the last two kept
    // deleting the webhook ends its subscription like any change, and deletes what it kept, with the rest of it,
    // once a worker purges it
    await api.portal.delete(`/portal-api/webhooks/${id}`);
    expect(await kept()).toBe(3);
    await startWorker();
    await eventually(async () => (await kept()) === 0 || null, 30_000, 'the purge of the deleted webhook');
  }, 60_000);
});
