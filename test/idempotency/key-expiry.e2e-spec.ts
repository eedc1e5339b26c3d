import { randomUUID } from 'node:crypto';
import { IdempotencyExpiry } from '../../src/common/idempotency/idempotency-expiry';
import { eventually } from '../helpers/eventually';
import { useService } from '../helpers/use-service';

const TTL_SECONDS = 2;

/**
 * Keys expire IDEMPOTENCY_KEY_TTL after their answer: the same key is then a new key, even for another request,
 * and the expired rows are deleted by the periodic clean-up.
 */
describe('idempotency key expiry (IDEMPOTENCY_KEY_TTL)', () => {
  const t = useService({ vars: { ROLE: 'api', IDEMPOTENCY_KEY_TTL: `${TTL_SECONDS}s` } });

  it('keeps an answer for the configured time, then takes the key as new', async () => {
    const k = `k-${randomUUID()}`;
    const first = await t.portal.post('/portal-api/apps', { Name: `Before ${k}` }, { 'idempotency-key': k });
    expect(first.status).toBe(200);
    const [row] = await t.db.query(
      `SELECT extract(epoch FROM expires_at - now()) AS left FROM idempotency_keys WHERE key = $1`,
      [k],
    );
    expect(Number(row.left)).toBeGreaterThan(0);
    expect(Number(row.left)).toBeLessThanOrEqual(TTL_SECONDS);

    // another request with the key is refused until the key has expired, then it is carried out
    const later = await eventually(
      async () => {
        const res = await t.portal.post('/portal-api/apps', { Name: `After ${k}` }, { 'idempotency-key': k });
        return res.status === 422 ? null : res;
      },
      15_000,
      'the key to expire',
    );
    expect(later.status).toBe(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.body.ID).not.toBe(first.body.ID);
    expect(await t.db.query(`SELECT fingerprint FROM idempotency_keys WHERE key = $1`, [k])).toHaveLength(1);
  });

  it('deletes expired keys in batches, and only those', async () => {
    const expired = `k-${randomUUID()}`;
    expect((await t.portal.post('/portal-api/apps', { Name: 'Expiring' }, { 'idempotency-key': expired })).status).toBe(
      200,
    );
    await eventually(
      async () =>
        (await t.db.query(`SELECT 1 FROM idempotency_keys WHERE key = $1 AND expires_at <= now()`, [expired])).length,
      15_000,
      'the key to expire',
    );
    // a key that is not expired: a claim of a request still running
    const live = `k-${randomUUID()}`;
    await t.db.query(
      `INSERT INTO idempotency_keys (scope, method, route, key, fingerprint, owner, expires_at)
       VALUES ('portal:x', 'POST', '/portal-api/apps', $1, 'f', gen_random_uuid(), now() + interval '1 hour')`,
      [live],
    );

    expect(await t.app.get(IdempotencyExpiry).run()).toBeGreaterThanOrEqual(1);
    const left = (await t.db.query(`SELECT key FROM idempotency_keys`)).map((r: any) => r.key);
    expect(left).not.toContain(expired);
    expect(left).toContain(live);
  });
});
