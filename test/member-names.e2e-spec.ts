import { ADMIN, seedUser } from './helpers/dashboard';
import { useService } from './helpers/use-service';

/**
 * Members named like Object's own (`constructor`, `prototype`) inside a body: refused as any other wrong value, never
 * a 500 and never dropped unseen (the stock validation pipe deletes them before it validates, so a free-form map
 * would be stored and acted on without them).
 */
describe('members named constructor or prototype', () => {
  // role api: nothing is ever delivered to the webhooks made here
  const t = useService({ vars: { ROLE: 'api' } });
  const webhook = { Name: 'n', URL: 'http://127.0.0.1:9/h', Events: ['AccessRequestApproved'] };
  let seq = 0;
  const user = () => ({ email_address: `m${++seq}@example.com`, first_name: 'A', last_name: 'B' });

  it('a user field holding an object with a constructor member is a 400, not a 500', async () => {
    const admin = await seedUser(t, { org: '' });
    for (const field of ['password', 'email_address', 'first_name']) {
      const odd = { constructor: 1, nested: { constructor: 'x' } };
      const viaAdmin = await t.http.post('/admin/users', { ...user(), [field]: odd }, ADMIN);
      expect(viaAdmin.status).toBe(400);
      expect(viaAdmin.body).toEqual({ Status: 'Error', Message: expect.stringContaining(field), Meta: null });
      const viaDashboard = await admin.http.post('/api/users', { ...user(), user_permissions: {}, [field]: odd });
      expect(viaDashboard.status).toBe(400);
      expect(viaDashboard.body.Message).toContain(field);
    }
  });

  it.each([
    ['Options', { Options: { constructor: 'x' } }],
    ['Options', { Type: 'rabbitmq', URL: 'amqp://mq.example.com', Options: { Exchange: 'e', prototype: 'y' } }],
    ['Filter', { Filter: { path: 'Event', eq: 'AccessRequestApproved', constructor: 1 } }],
    ['Filter', { Filter: { all: [{ path: 'Event', eq: 'x', prototype: 'y' }] } }],
    ['Headers', { Headers: [{ Name: 'X-A', Value: 'b', constructor: 'c' }] }],
  ])('a webhook whose %s holds one is a 422 naming where, and is not created', async (field, extra) => {
    const before = (await t.portal.get('/portal-api/webhooks?per_page=100')).body.length;
    const res = await t.portal.post('/portal-api/webhooks', { ...webhook, ...extra });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.stringMatching(new RegExp(`^${field}\\..*(constructor|prototype)`))]);
    expect((await t.portal.get('/portal-api/webhooks?per_page=100')).body).toHaveLength(before);

    const created = (await t.portal.post('/portal-api/webhooks', webhook)).body;
    const stored = (await t.portal.get(`/portal-api/webhooks/${created.ID}`)).body;
    const put = await t.portal.put(`/portal-api/webhooks/${created.ID}`, extra);
    expect(put.status).toBe(422);
    expect((await t.portal.get(`/portal-api/webhooks/${created.ID}`)).body).toEqual(stored);
  });

  it('a filter tried on a sample event holding one is a 422, not an answer about a different event', async () => {
    const res = await t.portal.post('/portal-api/webhooks/filters/test', {
      Filter: { path: 'Message.constructor', exists: true },
      Event: { Event: 'AccessRequestApproved', Message: { constructor: 'x' } },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.stringContaining('Event.Message.constructor')]);
  });

  it('at the top level of a body it is an unknown member, ignored like any other', async () => {
    const res = await t.portal.post('/portal-api/webhooks', { ...webhook, constructor: 'x', prototype: { a: 1 } });
    expect(res.status).toBe(201);
    const app = await t.portal.post('/portal-api/apps', { Name: 'a', constructor: 1 });
    expect(app.status).toBe(200);
  });
});
