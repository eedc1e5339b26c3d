import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { hashTaggedPrefix, redisOptionsFromUrl } from '../../src/queue/redis-connection';
import { OutboxRelay } from '../../src/webhooks/worker/outbox-relay';
import { createAccessRequest, createApp, outboxRows } from '../helpers/portal';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

describe('portal events: written with the change, relayed into one queued job per delivery', () => {
  const t = useService({ receiver: true });
  let queue: Queue;
  let redis: IORedis;

  beforeAll(async () => {
    queue = t.adopt(
      new Queue('deliveries', {
        connection: redisOptionsFromUrl(t.env.redisUrl),
        prefix: hashTaggedPrefix(t.env.queuePrefix),
      }),
    );
    redis = new IORedis(redisOptionsFromUrl(t.env.redisUrl));
    // Paused, the delivery worker leaves the jobs where the relay put them, so the spec can look at them.
    await queue.pause();
  });
  afterAll(() => redis.disconnect());

  /** The queue's own event log (a Redis stream): every job added, and every add refused as a duplicate. */
  async function queueLog(): Promise<{ event: string; jobId: string }[]> {
    const entries = await redis.xrange(`${hashTaggedPrefix(t.env.queuePrefix)}:deliveries:events`, '-', '+');
    const out: { event: string; jobId: string }[] = [];
    for (const [, fields] of entries) {
      const entry: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i]] = fields[i + 1];
      if (entry.event === 'added' || entry.event === 'duplicated') out.push({ event: entry.event, jobId: entry.jobId });
    }
    return out;
  }

  const relayedAt = async (eventId: string): Promise<Date | null> =>
    (await t.db.query(`SELECT relayed_at FROM outbox_events WHERE id = $1`, [eventId]))[0].relayed_at;
  const deliveriesOf = async (eventId: string): Promise<{ id: string; webhook_id: string }[]> =>
    t.db.query(`SELECT id, webhook_id FROM webhook_deliveries WHERE event_id = $1`, [eventId]);

  it('an event nobody subscribes to is relayed and queues nothing', async () => {
    const app = await createApp(t.portal, { Name: 'Quiet app', UserID: 11 });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID, Products: ['weather-api', 'maps-api'] });
    const approved = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(approved.status).toBe(200);

    const rows = await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID);
    expect(rows).toHaveLength(1);
    const event = rows[0];
    const [times] = await t.db.query(`SELECT created_at, updated_at FROM portal_access_requests WHERE id = $1`, [
      ar.ID,
    ]);
    expect(event.payload).toEqual({
      ID: ar.ID,
      AppID: app.ID,
      ByUser: 11,
      Status: 'approved',
      ProductIDs: [],
      PlanID: 0,
      CreatedAt: times.created_at.toISOString(),
      UpdatedAt: times.updated_at.toISOString(),
      UserID: 11,
      Catalogue: 'Public catalogue',
      Client: 'Quiet app',
      Plan: 'Free plan',
      Products: ['weather-api', 'maps-api'],
      AuthType: 'authToken',
    });
    // the same instants the responses show to the minute
    expect(event.payload.CreatedAt.slice(0, 16).replace('T', ' ')).toBe(ar.CreatedAt);
    expect(event.payload.UpdatedAt.slice(0, 16).replace('T', ' ')).toBe(approved.body.UpdatedAt);

    const [credential] = await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID);
    await eventually(() => relayedAt(event.id), 10_000, 'the relay to take the approval');
    await eventually(() => relayedAt(credential.id), 10_000, 'the relay to take the credential event');
    expect(await deliveriesOf(event.id)).toEqual([]);
    expect(await queueLog()).toEqual([]);
    expect(await queue.getJobCountByTypes('waiting', 'paused', 'delayed', 'active', 'prioritized')).toBe(0);
  });

  it('an approval queues one job per delivery, with jobId = delivery id and attempt, and no job for an event nobody subscribes to', async () => {
    const hooks: string[] = [];
    for (const name of ['one', 'two']) {
      const res = await t.portal.post('/portal-api/webhooks', {
        Name: name,
        URL: t.sink.url(),
        Events: ['AccessRequestApproved'],
      });
      expect(res.status).toBe(201);
      hooks.push(res.body.ID);
    }
    const app = await createApp(t.portal, { Name: 'Relay app' });
    const ar = await createAccessRequest(t.portal, { AppID: app.ID });
    expect((await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`)).status).toBe(200);
    const [event] = await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID);
    const [credential] = await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID);

    await eventually(() => relayedAt(event.id), 10_000, 'the relay to take the approval');
    await eventually(() => relayedAt(credential.id), 10_000, 'the relay to take the credential event');
    const deliveries = await deliveriesOf(event.id);
    expect(deliveries.map((d) => d.webhook_id).sort()).toEqual([...hooks].sort());
    expect(await deliveriesOf(credential.id)).toEqual([]);
    const jobIds = deliveries.map((d) => `${d.id}-1`).sort();
    await eventually(async () => (await queueLog()).length >= 2, 10_000, 'the jobs in the queue');
    expect((await queueLog()).map((e) => e.jobId).sort()).toEqual(jobIds);
    for (const d of deliveries) {
      const job = await queue.getJob(`${d.id}-1`);
      expect(job?.name).toBe('delivery.send');
      expect(job?.data).toEqual({ deliveryId: d.id, at: expect.any(String), webhookId: d.webhook_id });
    }

    // relaying the same event again creates no delivery and adds no job
    await t.db.query(`UPDATE outbox_events SET relayed_at = NULL WHERE id = $1`, [event.id]);
    // (or the relay's own poll takes it first)
    await t.app.get(OutboxRelay).relay({ ids: [event.id], from: null, to: null });
    await eventually(() => relayedAt(event.id), 10_000, 'the second relay');
    expect(await deliveriesOf(event.id)).toHaveLength(2);
    expect((await queueLog()).map((e) => e.jobId).sort()).toEqual(jobIds);
    expect(t.sink.received).toHaveLength(0);
  });

  it('relays an event whose NOTIFY never came, by the safety-net scan', async () => {
    const [{ id }] = await t.db.query(
      `INSERT INTO outbox_events (id, name, payload, occurred_at) VALUES (gen_random_uuid(), 'ApplicationRegistered', '{"ID": 999}', now()) RETURNING id`,
    );
    await eventually(() => relayedAt(id), 10_000, 'the scan to take the event');
  });

  it('writes Created, Rejected and CredentialRegistered Messages without secrets', async () => {
    const app = await createApp(t.portal, { Name: 'Message app', UserID: 4 });
    const ar = await createAccessRequest(t.portal, {
      AppID: app.ID,
      ProvisionImmediately: true,
      Products: ['p1'],
      ProductIDs: [31],
      PlanID: 6,
    });
    const rejected = await t.portal.put(`/portal-api/access_requests/${ar.ID}/reject`);
    expect(rejected.status).toBe(200);

    const [row] = await t.db.query(`SELECT created_at, updated_at FROM portal_access_requests WHERE id = $1`, [ar.ID]);
    const base = {
      ID: ar.ID,
      AppID: app.ID,
      ByUser: 4,
      ProductIDs: [31],
      PlanID: 6,
      CreatedAt: row.created_at.toISOString(),
      UserID: 4,
      Catalogue: 'Public catalogue',
      Client: 'Message app',
      Plan: 'Free plan',
      Products: ['p1'],
      AuthType: 'authToken',
    };
    const created = await outboxRows(t, 'AccessRequestCreated', 'ID', ar.ID);
    expect(created.map((r) => r.payload)).toEqual([
      // provisioned at once: created approved, never pending
      { ...base, Status: 'approved', UpdatedAt: row.created_at.toISOString() },
    ]);
    const rejectedRows = await outboxRows(t, 'AccessRequestRejected', 'ID', ar.ID);
    expect(rejectedRows.map((r) => r.payload)).toEqual([
      { ...base, Status: 'rejected', UpdatedAt: row.updated_at.toISOString() },
    ]);
    const credential = await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID);
    const [issued] = await t.db.query(`SELECT id, created_at FROM portal_credentials WHERE access_request_id = $1`, [
      ar.ID,
    ]);
    expect(credential.map((r) => r.payload)).toEqual([
      {
        ID: issued.id,
        ByUser: 4,
        AccessRequestID: ar.ID,
        AppID: app.ID,
        CreatedAt: issued.created_at.toISOString(),
        UserID: 4,
        AuthType: 'authToken',
        OAuthClientID: '',
      },
    ]);

    const payloads = (await t.db.query(`SELECT payload::text AS p FROM outbox_events`))
      .map((r: { p: string }) => r.p)
      .join('\n');
    expect(payloads).not.toContain(ar.Credentials[0].Credential);
    expect(payloads).not.toContain(ar.Credentials[0].CredentialHash);
  });

  it('a change that rolls back emits nothing', async () => {
    const app = await createApp(t.portal, { Name: 'Rollback app' });
    // DCR with no identity provider configured: the approval fails inside its transaction
    const ar = await createAccessRequest(t.portal, { AppID: app.ID, AuthType: 'oauth2.0', DCREnabled: true });
    const [{ before }] = await t.db.query(`SELECT count(*)::int AS before FROM outbox_events`);
    const res = await t.portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(res.status).toBe(502);
    const [{ after }] = await t.db.query(`SELECT count(*)::int AS after FROM outbox_events`);
    expect(after).toBe(before);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(0);
    expect((await t.portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Status).toBe('pending');
  });
});
