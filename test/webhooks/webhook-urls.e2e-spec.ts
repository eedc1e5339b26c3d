import { createWebhook } from '../helpers/portal';
import { useService } from '../helpers/use-service';

/**
 * A webhook's URL is judged as the HTTP client will read it (WHATWG URL parsing), so every spelling of one address
 * is treated alike; and a password in it is shown masked, as a broker's is, and sent as HTTP Basic authentication.
 * Only loopback addresses, which the tests' WEBHOOK_ALLOWED_CIDRS opens.
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
    for (const URL of [
      'http:127.0.0.1/x',
      'http:/127.0.0.1/x',
      'http:\\\\127.0.0.1/x',
      'http://127.0.0.256/',
      // whitespace and control characters, which the parser would drop or escape
      'http://127.0.0.1:1/\r\nX: y',
      'http://127.0.0.1:1/a b',
      'http://127.0.0.1:1/\t',
      ' http://127.0.0.1:1/',
    ]) {
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

  it('never answers with the password of a URL, keeps it sealed at rest, and sends it as Basic authentication', async () => {
    const clear = t.sink.url('/basic').replace('http://', 'http://hook-user:s3cret@');
    const masked = t.sink.url('/basic').replace('http://', 'http://hook-user:***@');
    const created = await createWebhook(t.portal, { Name: 'basic', URL: clear });
    const id = created.ID;
    expect(created.URL).toBe(masked);
    expect((await t.portal.get(`/portal-api/webhooks/${id}`)).body.URL).toBe(masked);
    const listed = (await t.portal.get('/portal-api/webhooks?per_page=100')).body.find(
      (w: { ID: string }) => w.ID === id,
    );
    expect(listed.URL).toBe(masked);
    const [row] = await t.db.query(`SELECT url, destination_encrypted FROM webhooks WHERE id = $1`, [id]);
    expect(row.url).toBe(masked);
    expect(row.destination_encrypted).toEqual(expect.any(String));
    expect(JSON.stringify(row)).not.toContain('s3cret');

    // sending the URL back as shown keeps the stored one, as for a broker's
    const put = await t.portal.put(`/portal-api/webhooks/${id}`, { Name: 'basic again', URL: masked });
    expect(put.status).toBe(200);
    expect(put.body.URL).toBe(masked);
    const req = await testSend(id, '/basic');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('hook-user:s3cret').toString('base64')}`);
  });

  it('keeps the stored password when a shown URL comes back edited, and refuses *** for another user', async () => {
    const clear = t.sink.url('/edit').replace('http://', 'http://edit-user:pa55@');
    const w = await createWebhook(t.portal, { Name: 'edited', URL: clear });
    const edited = t.sink.url('/edited').replace('http://', 'http://edit-user:***@');
    const put = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { URL: edited });
    expect([put.status, put.body.URL]).toEqual([200, edited]);
    const req = await testSend(w.ID, '/edited');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('edit-user:pa55').toString('base64')}`);

    const other = t.sink.url('/edited').replace('http://', 'http://someone-else:***@');
    const refused = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { URL: other });
    expect([refused.status, refused.body.errors]).toEqual([
      422,
      ['URL: *** stands for the stored password of the same user only: send the password itself'],
    ]);
    // a webhook without credentials has none for *** to stand for
    const plain = await createWebhook(t.portal, { Name: 'plain', URL: t.sink.url('/plain') });
    const guessed = await t.portal.put(`/portal-api/webhooks/${plain.ID}`, { URL: other });
    expect(guessed.status).toBe(422);
  });

  it("lets the webhook's own Authorization header win over the URL's credentials", async () => {
    const URL = t.sink.url('/own-auth').replace('http://', 'http://u:p@');
    const w = await createWebhook(t.portal, { URL, Headers: [{ Name: 'Authorization', Value: 'Bearer own' }] });
    expect((await testSend(w.ID, '/own-auth')).headers.authorization).toBe('Bearer own');
  });

  it('masks a URL saved in clear before URLs were sealed, and keeps it when the masked form comes back', async () => {
    const w = await createWebhook(t.portal, { Name: 'old', URL: t.sink.url('/old') });
    const clear = t.sink.url('/old').replace('http://', 'http://old-user:0ld-pass@');
    await t.db.query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [w.ID, clear]);
    const masked = t.sink.url('/old').replace('http://', 'http://old-user:***@');
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.URL).toBe(masked);
    // the operational events say it masked too
    expect((await t.portal.put(`/portal-api/webhooks/${w.ID}`, { Active: false })).status).toBe(200);
    const [event] = await t.db.query(
      `SELECT payload FROM outbox_events WHERE name = 'WebhookDisabled' AND payload->>'WebhookID' = $1`,
      [w.ID],
    );
    expect(event.payload.URL).toBe(masked);
    const put = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { URL: masked, Active: true });
    expect(put.body.URL).toBe(masked);
    const [row] = await t.db.query(`SELECT url FROM webhooks WHERE id = $1`, [w.ID]);
    expect(row.url).toBe(masked);
    const req = await testSend(w.ID, '/old');
    expect(req.headers.authorization).toBe(`Basic ${Buffer.from('old-user:0ld-pass').toString('base64')}`);
  });
});
