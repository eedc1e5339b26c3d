import { useService } from '../helpers/use-service';

/** An explicit null is not "left out": PUT refuses it with 422 naming the field, as POST does. */
describe('webhooks: explicit nulls', () => {
  // role api: nothing is ever delivered to the webhook made here
  const t = useService({ vars: { ROLE: 'api' } });
  const webhook = {
    Name: 'n',
    URL: 'http://127.0.0.1:9/h',
    Events: ['AccessRequestApproved'],
    Headers: [{ Name: 'X-A', Value: 'b' }],
  };

  it.each(['Name', 'URL', 'Method', 'Timeout', 'Active', 'Headers', 'Events'])(
    'PUT with %s: null is a 422 naming it, and changes nothing',
    async (field) => {
      const created = (await t.portal.post('/portal-api/webhooks', webhook)).body;
      const before = (await t.portal.get(`/portal-api/webhooks/${created.ID}`)).body;
      const res = await t.portal.put(`/portal-api/webhooks/${created.ID}`, { [field]: null });
      expect(res.status).toBe(422);
      expect(res.body.status).toBe('error');
      expect(res.body.errors.join(' ')).toContain(field);
      const after = (await t.portal.get(`/portal-api/webhooks/${created.ID}`)).body;
      expect(after).toEqual(before);
      expect(after.Headers).toEqual([expect.objectContaining({ Name: 'X-A', Value: 'b' })]);
    },
  );

  it.each(['Name', 'URL', 'Events'])('POST with %s: null is a 422 too', async (field) => {
    const res = await t.portal.post('/portal-api/webhooks', { ...webhook, [field]: null });
    expect(res.status).toBe(422);
    expect(res.body.errors.join(' ')).toContain(field);
  });

  it('fields left out keep their value', async () => {
    const created = (await t.portal.post('/portal-api/webhooks', webhook)).body;
    const res = await t.portal.put(`/portal-api/webhooks/${created.ID}`, { Timeout: 5 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Name: 'n', Timeout: 5, Method: 'POST' });
  });
});
