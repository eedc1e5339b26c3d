import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { OutboxRelay } from '../../src/events/outbox-relay.service';
import { redisOptionsFromUrl } from '../../src/queue/redis-connection';
import { HttpClient } from '../helpers/http';
import { createAccessRequest, createApp, eventually, outboxRows, portalClient } from '../helpers/portal';
import { startTestApp, TestApp } from '../helpers/test-app';

describe('portal events: written with the change, relayed to the events queue once', () => {
  let t: TestApp;
  let portal: HttpClient;
  let queue: Queue;
  let redis: IORedis;

  beforeAll(async () => {
    t = await startTestApp();
    portal = portalClient(t);
    queue = new Queue('events', { connection: redisOptionsFromUrl(t.env.redisUrl), prefix: t.env.queuePrefix });
    redis = new IORedis(redisOptionsFromUrl(t.env.redisUrl));
    // Paused, a consumer of the events queue (the webhook fan-out, in worker roles) leaves the jobs where
    // the relay put them, so the spec can look at them whatever else runs in the process.
    await queue.pause();
  });
  afterAll(async () => {
    await queue.close();
    redis.disconnect();
    await t.close();
  });

  /** The queue's own event log (a Redis stream): how often a job id was added, or refused as a duplicate. */
  async function queueLog(jobId: string): Promise<string[]> {
    const entries = await redis.xrange(`${t.env.queuePrefix}:events:events`, '-', '+');
    const out: string[] = [];
    for (const [, fields] of entries) {
      const entry: Record<string, string> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) entry[fields[i]] = fields[i + 1];
      if (entry.jobId === jobId) out.push(entry.event);
    }
    return out;
  }

  const relayedAt = async (eventId: string): Promise<Date | null> =>
    (await t.db.query(`SELECT relayed_at FROM outbox_events WHERE id = $1`, [eventId]))[0].relayed_at;

  it('an approval writes exactly one AccessRequestApproved, and the relay queues it with jobId = event id', async () => {
    const app = await createApp(portal, { Name: 'Relay app', UserID: 11 });
    const ar = await createAccessRequest(portal, { AppID: app.ID, Products: ['weather-api', 'maps-api'] });
    const approved = await portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(approved.status).toBe(200);

    const rows = await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID);
    expect(rows).toHaveLength(1);
    const event = rows[0];
    const [times] = await t.db.query(`SELECT created_at, updated_at FROM portal_access_requests WHERE id = $1`, [ar.ID]);
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
      Client: 'Relay app',
      Plan: 'Free plan',
      Products: ['weather-api', 'maps-api'],
      AuthType: 'authToken',
    });
    // the same instants the responses show to the minute
    expect(event.payload.CreatedAt.slice(0, 16).replace('T', ' ')).toBe(ar.CreatedAt);
    expect(event.payload.UpdatedAt.slice(0, 16).replace('T', ' ')).toBe(approved.body.UpdatedAt);

    await eventually(() => relayedAt(event.id), 'the relay to mark the event relayed');
    const job = await eventually(() => queue.getJob(event.id), 'the job in the events queue');
    expect(job.id).toBe(event.id);
    expect(job.name).toBe('event.fanout');
    expect(job.data).toEqual({ eventId: event.id });
    const log = await queueLog(event.id);
    expect(log.filter((e) => e === 'added')).toHaveLength(1);
    expect(log).not.toContain('duplicated');
  });

  it('relaying the same event again adds no second job', async () => {
    const app = await createApp(portal, { Name: 'Twice app' });
    const ar = await createAccessRequest(portal, { AppID: app.ID });
    expect((await portal.put(`/portal-api/access_requests/${ar.ID}/approve`)).status).toBe(200);
    const [event] = await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID);
    await eventually(() => relayedAt(event.id), 'the first relay');
    await eventually(() => queue.getJob(event.id), 'the job in the events queue');

    await t.db.query(`UPDATE outbox_events SET relayed_at = NULL WHERE id = $1`, [event.id]);
    await t.app.get(OutboxRelay).relayBatch();
    await eventually(() => relayedAt(event.id), 'the second relay');
    await eventually(async () => (await queueLog(event.id)).includes('duplicated'), 'the queue to refuse the second add');

    const log = await queueLog(event.id);
    expect(log.filter((e) => e === 'added')).toHaveLength(1);
    const jobs = await queue.getJobs(['waiting', 'paused', 'active', 'delayed', 'completed', 'failed', 'prioritized']);
    expect(jobs.filter((j) => j.id === event.id)).toHaveLength(1);
  });

  it('writes Created, Rejected and CredentialRegistered Messages without secrets', async () => {
    const app = await createApp(portal, { Name: 'Message app', UserID: 4 });
    const ar = await createAccessRequest(portal, { AppID: app.ID, ProvisionImmediately: true, Products: ['p1'], ProductIDs: [31], PlanID: 6 });
    const rejected = await portal.put(`/portal-api/access_requests/${ar.ID}/reject`);
    expect(rejected.status).toBe(200);

    const [row] = await t.db.query(`SELECT created_at, updated_at FROM portal_access_requests WHERE id = $1`, [ar.ID]);
    const base = {
      ID: ar.ID, AppID: app.ID, ByUser: 4, ProductIDs: [31], PlanID: 6, CreatedAt: row.created_at.toISOString(), UserID: 4,
      Catalogue: 'Public catalogue', Client: 'Message app', Plan: 'Free plan', Products: ['p1'], AuthType: 'authToken',
    };
    const created = await outboxRows(t, 'AccessRequestCreated', 'ID', ar.ID);
    expect(created.map((r) => r.payload)).toEqual([{ ...base, Status: 'pending', UpdatedAt: row.created_at.toISOString() }]);
    const rejectedRows = await outboxRows(t, 'AccessRequestRejected', 'ID', ar.ID);
    expect(rejectedRows.map((r) => r.payload)).toEqual([{ ...base, Status: 'rejected', UpdatedAt: row.updated_at.toISOString() }]);
    const credential = await outboxRows(t, 'CredentialRegistered', 'AccessRequestID', ar.ID);
    const [issued] = await t.db.query(`SELECT id, created_at FROM portal_credentials WHERE access_request_id = $1`, [ar.ID]);
    expect(credential.map((r) => r.payload)).toEqual([
      { ID: issued.id, ByUser: 4, AccessRequestID: ar.ID, AppID: app.ID, CreatedAt: issued.created_at.toISOString(), UserID: 4, AuthType: 'authToken', OAuthClientID: '' },
    ]);

    const payloads = (await t.db.query(`SELECT payload::text AS p FROM outbox_events`)).map((r: { p: string }) => r.p).join('\n');
    expect(payloads).not.toContain(ar.Credentials[0].Credential);
    expect(payloads).not.toContain(ar.Credentials[0].CredentialHash);
  });

  it('a change that rolls back emits nothing', async () => {
    const app = await createApp(portal, { Name: 'Rollback app' });
    // DCR with no identity provider configured: the approval fails inside its transaction
    const ar = await createAccessRequest(portal, { AppID: app.ID, AuthType: 'oauth2.0', DCREnabled: true });
    const [{ before }] = await t.db.query(`SELECT count(*)::int AS before FROM outbox_events`);
    const res = await portal.put(`/portal-api/access_requests/${ar.ID}/approve`);
    expect(res.status).toBe(502);
    const [{ after }] = await t.db.query(`SELECT count(*)::int AS after FROM outbox_events`);
    expect(after).toBe(before);
    expect(await outboxRows(t, 'AccessRequestApproved', 'ID', ar.ID)).toHaveLength(0);
    expect((await portal.get(`/portal-api/access_requests/${ar.ID}`)).body.Status).toBe('pending');
  });
});
