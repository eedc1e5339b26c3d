import { useService } from '../helpers/use-service';

/**
 * A webhook's URL is judged as the HTTP client will read it (WHATWG URL parsing), so every spelling of one address
 * is treated alike. Only loopback addresses, which the tests' WEBHOOK_ALLOWED_CIDRS opens.
 */
describe('webhook URLs', () => {
  const t = useService({ receiver: true });
  const at = (path: string) => t.sink.received.filter((r) => r.url === path);

  async function testSend(id: string, path: string) {
    expect((await t.portal.post(`/portal-api/webhooks/${id}/test`, {})).status).toBe(202);
    await t.sink.waitFor(() => at(path).length > 0, 15_000, `a delivery to ${path}`);
    return at(path)[0];
  }

  it('takes every spelling of 127.0.0.1 that the URL parser reads so, and delivers to it', async () => {
    const port = t.sink.port;
    const forms = [
      `http://0x7f000001:${port}`,
      `http://2130706433:${port}`,
      `http://127.1:${port}`,
      `http://0177.0.0.1:${port}`,
    ];
    for (const [i, base] of forms.entries()) {
      const URL = `${base}/form${i}`;
      const created = await t.portal.post('/portal-api/webhooks', {
        Name: `form ${i}`,
        URL,
        Events: ['AccessRequestApproved'],
      });
      expect({ URL, status: created.status, warnings: created.body.Warnings }).toEqual({
        URL,
        status: 201,
        warnings: undefined,
      });
      expect(created.body.URL).toBe(URL);
      const updated = await t.portal.put(`/portal-api/webhooks/${created.body.ID}`, { URL });
      expect({ URL, status: updated.status }).toEqual({ URL, status: 200 });
      expect((await testSend(created.body.ID, `/form${i}`)).method).toBe('POST');
    }
  });

  it('refuses a URL that is not written out as scheme://host, even where the parser would complete it', async () => {
    const w = await t.webhook();
    for (const URL of ['http:127.0.0.1/x', 'http:/127.0.0.1/x', 'http:\\\\127.0.0.1/x', 'http://127.0.0.256/']) {
      for (const res of [
        await t.portal.post('/portal-api/webhooks', { Name: 'n', URL, Events: ['AccessRequestApproved'] }),
        await t.portal.put(`/portal-api/webhooks/${w.ID}`, { URL }),
      ]) {
        expect({ URL, status: res.status, errors: res.body.errors }).toEqual({
          URL,
          status: 422,
          errors: ['URL must be an absolute http(s) URL'],
        });
      }
    }
  });
});
