import { createRedisClient, redisTargetFromUrl } from '../src/queue/redis-connection';
import { emitEvent } from './helpers/events';
import { eventually } from './helpers/eventually';
import { HttpClient } from './helpers/http-client';
import { createWebhook } from './helpers/portal';
import { ServiceProcess } from './helpers/service-process';
import { TEST_SECRETS, deleteQueueKeys } from './helpers/test-env';
import { closeAfterEach } from './helpers/use-fixture';
import { Service, startService } from './helpers/use-service';

const PREFIX_LINE = /Redis keys start with (\{gwm-[0-9a-f]{8}\}), this database's own \(QUEUE_PREFIX is not set\)/;

/**
 * Deployments that set no QUEUE_PREFIX and share a Redis, each on its own database (two clones of the tests'
 * migrated template, so with the same stored identity): each keeps its jobs apart, under its database's own prefix.
 * With one shared prefix, a worker took the other deployment's jobs, found no such delivery and dropped them, and
 * they went out only when the owner's reconciler queued them again, seconds later.
 */
describe('deployments on one Redis without QUEUE_PREFIX', () => {
  const closer = closeAfterEach();

  /** The deployment's processes as `npm start` runs them, without QUEUE_PREFIX; their settled prefix. */
  const processes = async (svc: Service, ...roles: string[]) => {
    const { QUEUE_PREFIX: _chosen, ...vars } = svc.env.vars;
    const prefixes: (string | undefined)[] = [];
    // its keys go once its processes have stopped
    closer.adopt({
      close: async () => {
        for (const prefix of new Set(prefixes)) if (prefix) await deleteQueueKeys(svc.env.redisUrl, prefix);
      },
    });
    const started = await Promise.all(roles.map((ROLE) => ServiceProcess.start({ ...vars, ROLE })));
    for (const p of started) closer.adopt(p);
    prefixes.push(...started.map((p) => PREFIX_LINE.exec(p.output)?.[1]));
    return { started, prefixes };
  };

  it('each deployment settles a prefix of its own, its API and worker processes agree on it, and each delivers its own at once', async () => {
    const a = closer.adopt(await startService({ vars: { ROLE: 'api' }, receiver: true }));
    const b = closer.adopt(await startService({ vars: { ROLE: 'api' }, receiver: true }));
    const hookA = await createWebhook(a.portal, { Name: 'a', URL: a.sink.url('/a') });
    await createWebhook(b.portal, { Name: 'b', URL: b.sink.url('/b') });

    const ofA = await processes(a, 'worker', 'api');
    const ofB = await processes(b, 'worker');
    const [prefixA, prefixOfAsApi] = ofA.prefixes;
    const [prefixB] = ofB.prefixes;
    expect(prefixA).toMatch(/^\{gwm-[0-9a-f]{8}\}$/);
    expect(prefixOfAsApi).toBe(prefixA);
    expect(prefixB).toMatch(/^\{gwm-[0-9a-f]{8}\}$/);
    expect(prefixB).not.toBe(prefixA);

    // events of both deployments, relayed by their own workers: every delivery goes on its first attempt
    for (let i = 1; i <= 5; i++) {
      await emitEvent(a, 'AccessRequestApproved', { ID: i });
      await emitEvent(b, 'AccessRequestApproved', { ID: i });
    }
    await a.sink.waitFor((r) => r.length >= 5, 30_000, "A's five deliveries");
    await b.sink.waitFor((r) => r.length >= 5, 30_000, "B's five deliveries");
    // (each attempt is recorded just after its answer)
    const recorded = (t: Service) =>
      t.db.query(
        `SELECT status, attempt_count FROM webhook_deliveries WHERE status <> 'delivered' OR attempt_count <> 1`,
      );
    for (const t of [a, b]) {
      await eventually(async () => (await recorded(t)).length === 0, 30_000, 'every attempt recorded');
      expect(await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries`)).toEqual([{ n: 5 }]);
    }
    expect(a.sink.received.map((r) => r.url)).toEqual(Array(5).fill('/a'));
    expect(b.sink.received.map((r) => r.url)).toEqual(Array(5).fill('/b'));

    // work A's API process queues (a redelivery) is taken by A's worker, through A's prefix
    const [{ id: delivery }] = await a.db.query(`SELECT id FROM webhook_deliveries LIMIT 1`);
    const api = new HttpClient(`http://127.0.0.1:${ofA.started[1].port}`, {
      authorization: TEST_SECRETS.PORTAL_API_TOKEN,
    });
    const redo = await api.post(`/portal-api/webhooks/${hookA.ID}/deliveries/${delivery}/redeliver`);
    expect(redo.status).toBe(200);
    await a.sink.waitFor((r) => r.length >= 6, 30_000, "A's redelivery");

    // and each deployment's keys are under its own prefix
    const redis = createRedisClient(redisTargetFromUrl(a.env.redisUrl));
    try {
      for (const prefix of [prefixA, prefixB]) expect(await redis.keys(`${prefix}:deliveries:*`)).not.toEqual([]);
    } finally {
      redis.disconnect();
    }
  }, 120_000);
});
