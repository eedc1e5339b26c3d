import { emitEvent } from '../helpers/events';
import { createWebhook } from '../helpers/portal';
import { TestApp } from '../helpers/test-app';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

async function refusedCount(t: TestApp): Promise<number> {
  const line = (await t.http.get('/metrics')).text
    .split('\n')
    .find((l) => l.startsWith('webhook_filter_refused_total '));
  return line ? Number(line.split(' ')[1]) : 0;
}

describe('webhook filters', () => {
  const t = useService({ receiver: true });

  it('creates no delivery for an event its filter refuses, counts it, and delivers those it accepts', async () => {
    const filter = {
      all: [
        { path: 'Message.Plan.Name', in: ['Gold', 'Platinum'] },
        { not: { path: 'Message.Catalogue', prefix: 'internal-' } },
        { path: 'Timestamp', gte: '2000-01-01T00:00:00.000Z' },
      ],
    };
    const w = await createWebhook(t.portal, { Name: 'gold only', URL: t.sink.url('/hook'), Filter: filter });
    expect(w.Filter).toEqual(filter);
    const unfiltered = await createWebhook(t.portal, { Name: 'all', URL: t.sink.url('/all') });
    expect(unfiltered.Filter).toBeUndefined();
    const before = await refusedCount(t);

    await emitEvent(t, 'AccessRequestApproved', { ID: 1, Plan: { Name: 'Silver' }, Catalogue: 'public' });
    await emitEvent(t, 'AccessRequestApproved', { ID: 2, Plan: { Name: 'Gold' }, Catalogue: 'internal-x' });
    await emitEvent(t, 'AccessRequestApproved', { ID: 3, Plan: { Name: 'Gold' }, Catalogue: 'public' });
    await emitEvent(t, 'AccessRequestApproved', { ID: 4, Catalogue: 'public' });

    await t.sink.waitFor(
      (r) => r.filter((x) => x.url === '/all').length >= 4,
      20_000,
      'four on the unfiltered webhook',
    );
    await eventually(async () => (await refusedCount(t)) - before === 3, 10_000, 'three refusals counted');
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [w.ID]);
    expect(n).toBe(1);
    await t.sink.waitFor((r) => r.some((x) => x.url === '/hook'), 10_000, 'the accepted one');
    expect(t.sink.received.filter((x) => x.url === '/hook').map((x) => JSON.parse(x.body).Message.ID)).toEqual([3]);
    const stats = (await t.portal.get(`/portal-api/webhooks/${w.ID}/stats`)).body;
    expect(stats).toMatchObject({ Delivered: 1 });

    // PUT Filter null removes it: every event goes again
    const cleared = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Filter: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.Filter).toBeUndefined();
    await emitEvent(t, 'AccessRequestApproved', { ID: 5 });
    await t.sink.waitFor(
      (r) => r.some((x) => x.url === '/hook' && JSON.parse(x.body).Message.ID === 5),
      10_000,
      'ID 5',
    );
  }, 60_000);

  it('a test send reaches a webhook whatever its filter', async () => {
    const w = await createWebhook(t.portal, {
      Name: 'never',
      URL: t.sink.url('/never'),
      Filter: { path: 'Event', eq: 'NoSuchEvent' },
    });
    const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/test`, {});
    expect(res.status).toBe(202);
    await t.sink.waitFor((r) => r.some((x) => x.url === '/never'), 10_000, 'the test delivery');
  });

  it('tests a filter against a sample event', async () => {
    const sample = { Event: 'AccessRequestApproved', Message: { Plan: { Name: 'gold plan' }, ID: 9 }, Timestamp: 't' };
    const ask = (Filter: unknown, Event: unknown = sample) =>
      t.portal.post('/portal-api/webhooks/filters/test', { Filter, Event });
    const yes = await ask({ path: 'Message.Plan.Name', regex: '^GOLD', ignoreCase: true });
    expect(yes.status).toBe(200);
    expect(yes.body).toEqual({ Matches: true });
    expect((await ask({ path: 'Message.ID', gt: 9 })).body).toEqual({ Matches: false });
    expect(
      (
        await ask({
          any: [
            { path: 'Message.ID', gt: 9 },
            { path: 'Event', eq: 'AccessRequestApproved' },
          ],
        })
      ).body,
    ).toEqual({
      Matches: true,
    });
    // no pattern backtracks: one a backtracking engine would spend about 2^30 steps on is answered like any other
    const aaa = { ...sample, Message: { ...sample.Message, Plan: { Name: `${'a'.repeat(60)}c` } } };
    expect((await ask({ path: 'Message.Plan.Name', regex: '(a|aa)*b' }, aaa)).body).toEqual({ Matches: false });
    expect((await ask({ path: 'Message.Plan.Name', regex: '(a|aa)*c$' }, aaa)).body).toEqual({ Matches: true });
    expect((await ask({ path: 'Message.Plan.Name', regex: 'gol+d', ignoreCase: true })).body).toEqual({
      Matches: true,
    });
    const bad = await ask({ path: 'Message.A', regex: '(?:a{1,30}){1,30}' });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toContain('Filter.regex: nests counted repetitions beyond 255');
    expect((await ask(undefined)).status).toBe(422);
    expect((await ask({ path: 'Event', eq: 'x' }, 'not an object')).status).toBe(422);
  });

  it('answers 422 naming the wrong part of a filter on create and update, and saves nothing', async () => {
    const bad = async (Filter: unknown) => {
      const res = await t.portal.post('/portal-api/webhooks', {
        Name: 'bad',
        URL: t.sink.url(),
        Events: ['AccessRequestApproved'],
        Filter,
      });
      expect(res.status).toBe(422);
      return JSON.stringify(res.body);
    };
    let deep: unknown = { path: 'Event', eq: 'x' };
    for (let i = 0; i < 9; i++) deep = { not: deep };
    expect(await bad(deep)).toContain('nests too deep');
    expect(await bad({ any: Array.from({ length: 65 }, (_, i) => ({ path: 'Message.ID', eq: i })) })).toContain(
      'is one rule too many',
    );
    expect(await bad({ path: 'Message.A', in: Array.from({ length: 90 }, () => 'x'.repeat(100)) })).toContain(
      'must be at most 8192 bytes',
    );
    expect(await bad({ all: [{ path: 'Message.A', regex: '((a{2}){2}){64}' }] })).toContain(
      'Filter.all[0].regex: nests counted repetitions beyond 255',
    );
    expect(await bad({ path: 'Body.A', eq: 1 })).toContain('Filter.path: must start with Event, Message, Timestamp');
    // JavaScript reads it, PostgreSQL would not: refused before it could reach fan-out
    expect(await bad({ any: [{ path: 'Message.A', regex: 'a[^]' }] })).toContain(
      'Filter.any[0].regex: must not use an empty class',
    );
    expect(await bad('Event == x')).toContain('Filter: must be an object');
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM webhooks WHERE name = 'bad'`);
    expect(n).toBe(0);

    const ok = await createWebhook(t.portal, { Name: 'ok', URL: t.sink.url() });
    const put = await t.portal.put(`/portal-api/webhooks/${ok.ID}`, { Filter: { path: 'Message.A', gt: [] } });
    expect(put.status).toBe(422);
    expect(JSON.stringify(put.body)).toContain('Filter.gt: must be a number or a string');
  });
});
