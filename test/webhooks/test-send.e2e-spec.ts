import { WEBHOOK_EVENTS } from '../../src/events/event-names';
import { emitEvent } from '../helpers/events';
import { ed25519Verifies, v1Verifies } from '../helpers/receivers';
import { UUID } from '../helpers/portal';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

describe('webhook test sends', () => {
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,1' }, receiver: true });

  /** A webhook with its own path on the sink, subscribed to every event there is. */
  const webhook = (body: Record<string, unknown> = {}) => t.webhook({ Events: [...WEBHOOK_EVENTS], ...body });

  const at = (path: string) => t.sink.received.filter((r) => r.url === path);

  async function settled(webhookId: string, deliveryId: string, status: string) {
    return eventually(
      async () => {
        const d = (await t.portal.get(`/portal-api/webhooks/${webhookId}/deliveries/${deliveryId}`)).body;
        return d.Status === status ? d : null;
      },
      15_000,
      `a ${status} delivery`,
    );
  }

  it('queues one signed WebhookTest delivery to that webhook alone; it arrives and shows in the delivery log', async () => {
    const w = await webhook();
    const bystander = await webhook(); // subscribed to every event there is
    const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, { Note: 'checking the endpoint' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ DeliveryID: expect.stringMatching(UUID), EventID: expect.stringMatching(UUID) });
    const { DeliveryID, EventID } = res.body;

    // in the log at once, before any attempt need have happened
    const logged = await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries/${DeliveryID}`);
    expect(logged.status).toBe(200);
    expect(logged.body).toMatchObject({ ID: DeliveryID, WebhookID: w.ID, EventID, Event: 'WebhookTest' });

    const [req] = await t.sink
      .waitFor(() => at(w.path).length === 1, 15_000, 'the test delivery')
      .then(() => at(w.path));
    expect(req.method).toBe('POST');
    expect(req.headers['webhook-id']).toBe(DeliveryID);
    expect(JSON.parse(req.body)).toEqual({
      Event: 'WebhookTest',
      Message: { WebhookID: w.ID, Note: 'checking the endpoint' },
      Timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/),
    });
    expect(v1Verifies(w.Secret, req)).toBe(true);

    const d = await settled(w.ID, DeliveryID, 'delivered');
    expect(d).toMatchObject({
      Status: 'delivered',
      AttemptCount: 1,
      Attempts: [{ Number: 1, StatusCode: 200, Error: null, Trigger: 'scheduled' }],
    });
    const list = (await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries`)).body as {
      ID: string;
      Event: string;
    }[];
    expect(list.map((x) => [x.ID, x.Event])).toEqual([[DeliveryID, 'WebhookTest']]);

    // nobody else got it: the bystander's log is empty, and an event after it reaches the bystander first
    expect((await t.portal.get(`/portal-api/webhooks/${bystander.ID}/deliveries`)).body).toEqual([]);
    await emitEvent(t, 'AccessRequestApproved', { ID: 1 });
    await t.sink.waitFor(() => at(bystander.path).length === 1, 15_000, 'the real event');
    expect(at(bystander.path).map((r) => JSON.parse(r.body).Event)).toEqual(['AccessRequestApproved']);
    const [{ count }] = await t.db.query(`SELECT count(*)::int AS count FROM webhook_deliveries WHERE event_id = $1`, [
      EventID,
    ]);
    expect(count).toBe(1);
  });

  it("signs a test send with the webhook's scheme and retries it like any delivery", async () => {
    const w = await webhook({ SignatureScheme: 'v1a' });
    let seen = 0;
    const responder = t.sink.responder;
    t.sink.responder = (r, i) =>
      r.url === w.path && seen++ === 0 ? { status: 500, body: 'not yet' } : responder(r, i);
    try {
      const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`);
      expect(res.status).toBe(202);
      const d = await settled(w.ID, res.body.DeliveryID, 'delivered');
      expect(d.Attempts.map((a: { StatusCode: number }) => a.StatusCode)).toEqual([500, 200]);
      const got = at(w.path);
      expect(got).toHaveLength(2);
      for (const r of got) {
        expect(r.headers['webhook-id']).toBe(res.body.DeliveryID);
        expect(JSON.parse(r.body).Message).toEqual({ WebhookID: w.ID, Note: '' });
        expect(ed25519Verifies(w.PublicKey!, r)).toBe(true);
      }
    } finally {
      t.sink.responder = responder;
    }
  });

  it('refuses an inactive webhook with 409, a bad Note with 422, and unknown webhooks with 404', async () => {
    const w = await webhook({ Active: false });
    const inactive = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, {});
    expect(inactive.status).toBe(409);
    expect(inactive.body).toEqual({ status: 'error', errors: [expect.stringContaining('inactive')] });
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries`)).body).toEqual([]);

    const active = await webhook();
    for (const Note of [42, 'x'.repeat(1025), ['a'], { a: 1 }]) {
      const res = await t.portal.post(`/portal-api/webhooks/${active.ID}/test`, { Note });
      expect([Note, res.status]).toEqual([Note, 422]);
      expect(res.body.status).toBe('error');
    }
    expect((await t.portal.post(`/portal-api/webhooks/${active.ID}/test`, { Note: 'x'.repeat(1024) })).status).toBe(
      202,
    );
    expect((await t.portal.post('/portal-api/webhooks/00000000-0000-4000-8000-000000000000/test', {})).status).toBe(
      404,
    );
    expect((await t.portal.post('/portal-api/webhooks/nope/test', {})).status).toBe(404);
    expect((await t.http.post(`/portal-api/webhooks/${active.ID}/test`, {})).status).toBe(401);
  });

  it('documents rotation, test sends and the new fields in the OpenAPI document', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const rotate = doc.paths['/portal-api/webhooks/{id}/secret/rotate'].post;
    expect(rotate.operationId).toBe('rotateWebhookSecret');
    expect(rotate.summary).toEqual(expect.any(String));
    expect(Object.keys(rotate.responses)).toEqual(expect.arrayContaining(['200', '404', '422']));
    const test = doc.paths['/portal-api/webhooks/{id}/test'].post;
    expect(test.operationId).toBe('sendWebhookTest');
    expect(Object.keys(test.responses)).toEqual(expect.arrayContaining(['202', '404', '409', '422']));
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.WebhookSecretResponse.properties)).toEqual([
      'Secret',
      'SignatureScheme',
      'PublicKey',
      'PreviousSecretExpiresAt',
    ]);
    expect(Object.keys(schemas.RotateSecretDto.properties)).toEqual(['GracePeriodSeconds']);
    expect(schemas.RotateSecretDto.properties.GracePeriodSeconds).toMatchObject({
      minimum: 0,
      maximum: 604800,
      default: 86400,
    });
    expect(Object.keys(schemas.WebhookTestResponse.properties)).toEqual(['DeliveryID', 'EventID']);
    expect(schemas.WebhookTestEvent.properties.Message).toEqual({ $ref: '#/components/schemas/WebhookTestMessage' });
    expect(schemas.WebhookResponse.properties.SignatureScheme.enum).toEqual(['v1', 'v1a']);
    expect(schemas.CreateWebhookDto.properties.SignatureScheme.enum).toEqual(['v1', 'v1a', null]); // null: the default
    expect(schemas.UpdateWebhookDto.properties.SignatureScheme.enum).toEqual(['v1', 'v1a']);
    expect(schemas.CreatedWebhookResponse.required).toEqual(
      expect.arrayContaining(['Secret', 'PublicKey', 'SignatureScheme']),
    );
  });

  it('does not let a webhook subscribe to WebhookTest', async () => {
    const res = await t.portal.post('/portal-api/webhooks', {
      Name: 'x',
      URL: t.sink.url('/x'),
      Events: ['WebhookTest'],
    });
    expect(res.status).toBe(422);
    expect(res.body.errors.join(' ')).toContain('each of Events must be one of');
  });
});
