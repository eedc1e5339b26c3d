import { SecretBox } from '../../src/common/crypto/secret-box';
import { emitEvent } from '../helpers/events';
import { ed25519Verifies, signatureSchemes, v1Verifies } from '../helpers/receivers';
import { ReceivedRequest } from '../helpers/sink';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

const MESSAGE = { ID: 7, AppID: 3, UserID: 1, Status: 'approved' };
const DAY_MS = 86_400_000;

describe('webhook signatures: schemes and key rotation', () => {
  // a short retry schedule: first attempt at once, then after 2 s
  const t = useService({ vars: { WEBHOOK_RETRY_SCHEDULE: '0,2' }, receiver: true });

  /** The `n`th request (from 1) to reach `path`, once it has. */
  const nthAt = async (path: string, n: number, what: string) =>
    (await t.sink.waitFor((rs) => rs.filter((r) => r.url === path).length >= n, 15_000, what)).filter(
      (r) => r.url === path,
    )[n - 1];

  /** Emits an event and answers the request it brings to the webhook at `path`. */
  async function deliver(path: string): Promise<ReceivedRequest> {
    const before = t.sink.received.filter((r) => r.url === path).length;
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
    return nthAt(path, before + 1, `a delivery to ${path}`);
  }

  /** Emits an event whose first attempt at `path` the sink answers with `status`, so a retry follows in 2 s. */
  async function deliverFailingFirst(path: string, status: number): Promise<void> {
    const responder = t.sink.responder;
    let seen = 0;
    // other paths, and the later attempts at this one, are answered as before
    t.sink.responder = (r, i) => (r.url === path && seen++ === 0 ? { status } : responder(r, i));
    await emitEvent(t, 'AccessRequestApproved', MESSAGE);
  }

  async function rawWebhook(id: string) {
    const [row] = await t.db.query(`SELECT row_to_json(w)::text AS json, w.* FROM webhooks w WHERE id = $1`, [id]);
    return row;
  }

  it('signs v1 deliveries so that the standardwebhooks and svix receivers verify them', async () => {
    const w = await t.webhook();
    expect(w).toMatchObject({ SignatureScheme: 'v1', PublicKey: null, Secret: expect.stringMatching(/^whsec_/) });
    const r = await deliver(w.path);
    expect(signatureSchemes(r)).toEqual(['v1']);
    expect(v1Verifies(w.Secret, r)).toBe(true);
    expect(v1Verifies((await t.webhook()).Secret, r)).toBe(false);
  });

  it('signs v1a deliveries with Ed25519: the published whpk_ key verifies them with node:crypto', async () => {
    const w = await t.webhook({ SignatureScheme: 'v1a' });
    expect(w.SignatureScheme).toBe('v1a');
    expect(w.PublicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(w.Secret).toBe(w.PublicKey); // what the receiver verifies with; the private key is never shown
    expect(Buffer.from(w.PublicKey!.slice(5), 'base64')).toHaveLength(32);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}`)).body.SignatureScheme).toBe('v1a');
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body).toEqual({
      Secret: w.PublicKey,
      SignatureScheme: 'v1a',
      PublicKey: w.PublicKey,
      PreviousSecretExpiresAt: null,
    });

    const r = await deliver(w.path);
    expect(signatureSchemes(r)).toEqual(['v1a']);
    expect(ed25519Verifies(w.PublicKey!, r)).toBe(true);
    expect(ed25519Verifies((await t.webhook({ SignatureScheme: 'v1a' })).PublicKey!, r)).toBe(false);
    expect(ed25519Verifies(w.PublicKey!, { ...r, body: r.body.replace('approved', 'rejected') })).toBe(false);
  });

  it('during a grace period, receivers holding only the old or only the new secret both verify the same delivery; after it only the new one does, and the old key is erased', async () => {
    const w = await t.webhook();
    const old = w.Secret;
    const before = Date.now();
    const rotated = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, { GracePeriodSeconds: 3 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({
      Secret: expect.stringMatching(/^whsec_/),
      SignatureScheme: 'v1',
      PublicKey: null,
      PreviousSecretExpiresAt: expect.any(String),
    });
    const fresh = rotated.body.Secret as string;
    expect(fresh).not.toBe(old);
    const until = Date.parse(rotated.body.PreviousSecretExpiresAt);
    expect(until).toBeGreaterThanOrEqual(before + 3000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3000 + 1000);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body).toEqual(rotated.body);

    const during = await deliver(w.path);
    expect(signatureSchemes(during)).toEqual(['v1', 'v1']);
    expect(v1Verifies(old, during)).toBe(true);
    expect(v1Verifies(fresh, during)).toBe(true);
    const row = await rawWebhook(w.ID);
    expect(row.previous_secret_encrypted).toMatch(/^v1:/);

    // once the period is over the old key is gone from the row, not just unused
    await eventually(
      async () => (await rawWebhook(w.ID)).previous_secret_encrypted === null,
      10_000,
      'the old key to be erased',
    );
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    const erased = await rawWebhook(w.ID);
    expect([erased.previous_signature_scheme, erased.previous_secret_expires_at]).toEqual([null, null]);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body).toEqual({
      ...rotated.body,
      PreviousSecretExpiresAt: null,
    });

    const after = await deliver(w.path);
    expect(signatureSchemes(after)).toEqual(['v1']);
    expect(v1Verifies(fresh, after)).toBe(true);
    expect(v1Verifies(old, after)).toBe(false);
  });

  it('retires the old key at once with GracePeriodSeconds 0', async () => {
    const w = await t.webhook();
    const rotated = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, { GracePeriodSeconds: 0 });
    expect(rotated.status).toBe(200);
    expect(rotated.body.PreviousSecretExpiresAt).toBeNull();
    const row = await rawWebhook(w.ID);
    expect([row.previous_secret_encrypted, row.previous_signature_scheme, row.previous_secret_expires_at]).toEqual([
      null,
      null,
      null,
    ]);
    const r = await deliver(w.path);
    expect(v1Verifies(rotated.body.Secret, r)).toBe(true);
    expect(v1Verifies(w.Secret, r)).toBe(false);
  });

  it('keeps the old key for 24 hours by default, and at most one previous key', async () => {
    const w = await t.webhook();
    const first = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`);
    expect(first.status).toBe(200);
    expect(Math.abs(Date.parse(first.body.PreviousSecretExpiresAt) - (Date.now() + DAY_MS))).toBeLessThan(10_000);
    const second = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, { GracePeriodSeconds: 604800 });
    expect(second.status).toBe(200);
    expect(Math.abs(Date.parse(second.body.PreviousSecretExpiresAt) - (Date.now() + 7 * DAY_MS))).toBeLessThan(10_000);
    const r = await deliver(w.path);
    expect(signatureSchemes(r)).toEqual(['v1', 'v1']);
    expect(v1Verifies(second.body.Secret, r)).toBe(true);
    expect(v1Verifies(first.body.Secret, r)).toBe(true);
    expect(v1Verifies(w.Secret, r)).toBe(false); // the key before the previous one is retired by the second rotation
  });

  it('rejects a grace period that is not an integer from 0 to 604800 with 422, and unknown webhooks with 404', async () => {
    const w = await t.webhook();
    for (const bad of [-1, 604801, 1.5, '60', true, [1]]) {
      const res = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, { GracePeriodSeconds: bad });
      expect([bad, res.status]).toEqual([bad, 422]);
      expect(res.body).toEqual({ status: 'error', errors: expect.any(Array) });
      expect(res.body.errors.length).toBeGreaterThan(0);
      for (const e of res.body.errors) expect(e).toContain('GracePeriodSeconds');
    }
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body.Secret).toBe(w.Secret); // nothing rotated
    expect(
      (await t.portal.post('/portal-api/webhooks/00000000-0000-4000-8000-000000000000/secret/rotate', {})).status,
    ).toBe(404);
    expect((await t.portal.post('/portal-api/webhooks/not-a-uuid/secret/rotate', {})).status).toBe(404);
    expect((await t.http.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, {})).status).toBe(401);
  });

  it('signs a retry queued before a rotation with the keys in force when it is sent', async () => {
    const w = await t.webhook();
    await deliverFailingFirst(w.path, 500);
    const attempt1 = await nthAt(w.path, 1, 'the first attempt');
    expect(v1Verifies(w.Secret, attempt1)).toBe(true);
    // the retry is already scheduled (in 2 s) when the key changes
    const rotated = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, { GracePeriodSeconds: 0 });
    const attempt2 = await nthAt(w.path, 2, 'the retry');
    expect(attempt2.headers['webhook-id']).toBe(attempt1.headers['webhook-id']);
    expect(v1Verifies(rotated.body.Secret, attempt2)).toBe(true);
    expect(v1Verifies(w.Secret, attempt2)).toBe(false);
  });

  it('signs a retry queued before a rotation with both keys during the grace period', async () => {
    const w = await t.webhook({ SignatureScheme: 'v1a' });
    await deliverFailingFirst(w.path, 503);
    expect(signatureSchemes(await nthAt(w.path, 1, 'the first attempt'))).toEqual(['v1a']);
    const rotated = await t.portal.post(`/portal-api/webhooks/${w.ID}/secret/rotate`, { GracePeriodSeconds: 600 });
    expect(rotated.body.PublicKey).not.toBe(w.PublicKey);
    const attempt2 = await nthAt(w.path, 2, 'the retry');
    expect(signatureSchemes(attempt2)).toEqual(['v1a', 'v1a']);
    expect(ed25519Verifies(rotated.body.PublicKey, attempt2)).toBe(true);
    expect(ed25519Verifies(w.PublicKey!, attempt2)).toBe(true);
  });

  it('switching SignatureScheme by PUT is a rotation with the default grace period', async () => {
    const w = await t.webhook();
    const same = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { SignatureScheme: 'v1' });
    expect(same.status).toBe(200);
    expect((await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body).toEqual({
      Secret: w.Secret,
      SignatureScheme: 'v1',
      PublicKey: null,
      PreviousSecretExpiresAt: null,
    });

    const put = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { SignatureScheme: 'v1a' });
    expect(put.status).toBe(200);
    expect(put.body.SignatureScheme).toBe('v1a');
    expect(put.body.Secret).toBeUndefined();
    const secret = (await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body;
    expect(secret).toEqual({
      Secret: expect.stringMatching(/^whpk_/),
      SignatureScheme: 'v1a',
      PublicKey: secret.Secret,
      PreviousSecretExpiresAt: expect.any(String),
    });
    expect(Math.abs(Date.parse(secret.PreviousSecretExpiresAt) - (Date.now() + DAY_MS))).toBeLessThan(10_000);

    const r = await deliver(w.path);
    expect(signatureSchemes(r)).toEqual(['v1a', 'v1']);
    expect(ed25519Verifies(secret.PublicKey, r)).toBe(true);
    expect(v1Verifies(w.Secret, r)).toBe(true); // a receiver that has not switched yet

    // and back: the Ed25519 key becomes the previous one
    await t.portal.put(`/portal-api/webhooks/${w.ID}`, { SignatureScheme: 'v1' });
    const back = (await t.portal.get(`/portal-api/webhooks/${w.ID}/secret`)).body;
    expect(back.SignatureScheme).toBe('v1');
    const r2 = await deliver(w.path);
    expect(signatureSchemes(r2)).toEqual(['v1', 'v1a']);
    expect(v1Verifies(back.Secret, r2)).toBe(true);
    expect(ed25519Verifies(secret.PublicKey, r2)).toBe(true);
    expect(v1Verifies(w.Secret, r2)).toBe(false);

    const bad = await t.portal.put(`/portal-api/webhooks/${w.ID}`, { SignatureScheme: 'v2' });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual(['SignatureScheme must be one of v1, v1a']);
    expect(
      (
        await t.portal.post('/portal-api/webhooks', {
          Name: 'x',
          URL: t.sink.url('/x'),
          Events: ['AccessRequestApproved'],
          SignatureScheme: 'hmac',
        })
      ).status,
    ).toBe(422);
  });

  it('keeps every key encrypted at rest: the raw rows hold none of them in clear', async () => {
    const box = t.app.get(SecretBox);
    const v1 = await t.webhook();
    const v1a = await t.webhook({ SignatureScheme: 'v1a' });
    const rotatedV1 = (await t.portal.post(`/portal-api/webhooks/${v1.ID}/secret/rotate`, { GracePeriodSeconds: 600 }))
      .body;
    await t.portal.post(`/portal-api/webhooks/${v1a.ID}/secret/rotate`, { GracePeriodSeconds: 600 });
    await deliver(v1a.path);

    const rows: { json: string; secret_encrypted: string; previous_secret_encrypted: string }[] = await t.db.query(
      `SELECT row_to_json(w)::text AS json, secret_encrypted, previous_secret_encrypted FROM webhooks w WHERE id = ANY($1::uuid[])`,
      [[v1.ID, v1a.ID]],
    );
    const clear: string[] = [];
    for (const row of rows) {
      expect(row.secret_encrypted).toMatch(/^v1:/);
      expect(row.previous_secret_encrypted).toMatch(/^v1:/);
      for (const sealed of [row.secret_encrypted, row.previous_secret_encrypted]) {
        const key = box.decrypt(sealed); // whsec_... or whsk_...
        expect(key).toMatch(/^(whsec_|whsk_)/);
        clear.push(key, key.replace(/^wh(sec|sk)_/, ''));
      }
    }
    expect(clear).toEqual(expect.arrayContaining([v1.Secret, rotatedV1.Secret]));
    const everything = JSON.stringify([
      rows.map((r) => r.json),
      await t.db.query(`SELECT row_to_json(e)::text FROM outbox_events e`),
      await t.db.query(`SELECT row_to_json(d)::text FROM webhook_deliveries d`),
      await t.db.query(`SELECT row_to_json(a)::text FROM webhook_delivery_attempts a`),
    ]);
    for (const c of clear) expect(everything).not.toContain(c);
    expect(everything).not.toMatch(/whsec_|whsk_/);
  });
});
