import { useService } from '../helpers/use-service';

/** The value of `webhooks_disabled_total{reason}` in a Prometheus text exposition, or undefined when it is absent. */
function disabledTotal(text: string, reason: string): number | undefined {
  const m = new RegExp(`^webhooks_disabled_total\\{reason="${reason}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** An API process (ROLE=api, no worker in it) counts the switch-offs it makes itself: PUT {"Active": false}. */
describe('webhooks_disabled_total in an API process', () => {
  const t = useService({ vars: { ROLE: 'api' } });

  it('counts each manual switch-off by PUT once, as reason="manual", and not a webhook created inactive', async () => {
    const metrics = async () => (await t.http.get('/metrics')).text;
    const before = await metrics();
    // every reason is there from the start, at zero
    for (const reason of ['gone', 'failing', 'manual']) expect(disabledTotal(before, reason)).toBe(0);
    expect(before).toMatch(/^# TYPE webhooks_disabled_total counter$/m);

    const created = await t.portal.post('/portal-api/webhooks', {
      Name: 'switched',
      URL: 'http://127.0.0.1:9/hook',
      Events: ['AccessRequestApproved'],
    });
    expect(created.status).toBe(201);
    const path = `/portal-api/webhooks/${created.body.ID}`;
    expect((await t.portal.put(path, { Active: false })).body).toMatchObject({
      Active: false,
      DisabledReason: 'manual',
    });
    expect(disabledTotal(await metrics(), 'manual')).toBe(1);

    // off already: no switch-off, no count (nor a WebhookDisabled event)
    expect((await t.portal.put(path, { Active: false, Timeout: 5 })).status).toBe(200);
    // created inactive: never switched off
    const inactive = await t.portal.post('/portal-api/webhooks', {
      Name: 'born off',
      URL: 'http://127.0.0.1:9/hook',
      Events: ['AccessRequestApproved'],
      Active: false,
    });
    expect(inactive.body).toMatchObject({ Active: false, DisabledReason: 'manual' });
    // an update refused by validation changes nothing
    expect((await t.portal.put(path, { Active: true, Timeout: 0 })).status).toBe(422);
    expect(disabledTotal(await metrics(), 'manual')).toBe(1);

    // on again, then off again: a second switch-off
    expect((await t.portal.put(path, { Active: true })).body.Active).toBe(true);
    expect((await t.portal.put(path, { Active: false })).body.Active).toBe(false);
    const after = await metrics();
    expect(disabledTotal(after, 'manual')).toBe(2);
    expect(disabledTotal(after, 'gone')).toBe(0);
    expect(disabledTotal(after, 'failing')).toBe(0);

    // as many as WebhookDisabled events recorded
    const [events] = await t.db.query(
      `SELECT count(*)::int AS n FROM outbox_events WHERE name = 'WebhookDisabled' AND payload->>'Reason' = 'manual'`,
    );
    expect(events.n).toBe(2);
  });
});
