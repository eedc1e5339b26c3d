'use strict';
// The equal-guarantees baseline's API process: bare Fastify + pg on the baseline's own schema
// (equal-schema.sql), PUT /portal-api/access_requests/:id/approve as one transaction of six round trips (BEGIN;
// lock the request with its app; status; sealed credential; both outbox rows + one NOTIFY with their ids;
// COMMIT), the answer built from what the statements returned, no read-back.
// Env: EQ_DATABASE_URL, EQ_PORT, EQ_PORTAL_TOKEN, EQ_KEY (hex), EQ_POOL (20).
const { createHash, randomBytes, randomUUID, timingSafeEqual } = require('node:crypto');
const Fastify = require('fastify');
const { Pool } = require('pg');
const { seal } = require('./equal-seal');

const db = new Pool({
  connectionString: process.env.EQ_DATABASE_URL,
  max: Number(process.env.EQ_POOL || 20),
  idleTimeoutMillis: Number(process.env.EQ_POOL_IDLE_MS), // the service's POOL_IDLE_MS, from the bench
});
const key = Buffer.from(process.env.EQ_KEY, 'hex');
const sha = (v) => createHash('sha256').update(v).digest();
const token = sha(process.env.EQ_PORTAL_TOKEN);
const time = (d) => d.toISOString().slice(0, 16).replace('T', ' ');

const LOCK = {
  name: 'eq_lock',
  text: `SELECT ar.id, ar.app_id, ar.catalogue, ar.plan, ar.products, ar.auth_type, ar.dcr_enabled, ar.provision_immediately, ar.user_ref,
                ar.status, ar.created_at, app.name AS app_name, app.user_id
           FROM portal_access_requests ar JOIN portal_apps app ON app.id = ar.app_id WHERE ar.id = $1 FOR UPDATE OF ar`,
};
const STATUS = {
  name: 'eq_status',
  text: `UPDATE portal_access_requests SET status = 'approved', updated_at = $2 WHERE id = $1 RETURNING updated_at`,
};
const CREDENTIAL = {
  name: 'eq_credential',
  text: `INSERT INTO portal_credentials (access_request_id, credential_encrypted, credential_hash, created_at) VALUES ($1, $2, $3, $4)`,
};
const EVENTS = {
  name: 'eq_events',
  text: `WITH e AS (INSERT INTO outbox_events (id, name, payload, occurred_at)
                   SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::timestamptz[]))
         SELECT pg_notify('outbox_events', $5)`,
};

const app = Fastify({ logger: false });

app.put('/portal-api/access_requests/:id/approve', async (req, reply) => {
  if (!timingSafeEqual(sha(String(req.headers.authorization ?? '')), token))
    return reply.code(401).send({ status: 'error', errors: ['Not authorised'] });
  const id = Number(req.params.id);
  if (!Number.isInteger(id) || id < 1) return reply.code(404).send({ status: 'error', errors: ['not found'] });
  const c = await db.connect();
  try {
    await c.query('BEGIN');
    const ar = (await c.query({ ...LOCK, values: [id] })).rows[0];
    if (!ar) {
      await c.query('ROLLBACK');
      return reply.code(404).send({ status: 'error', errors: ['not found'] });
    }
    if (ar.status !== 'pending') {
      await c.query('ROLLBACK');
      return reply.code(409).send({ status: 'error', errors: [`access request is ${ar.status}`] });
    }
    const now = new Date();
    const { updated_at } = (await c.query({ ...STATUS, values: [id, now] })).rows[0];
    const secret = randomBytes(32).toString('hex');
    const hash = createHash('sha256').update(secret).digest('hex');
    await c.query({ ...CREDENTIAL, values: [id, seal(key, secret), hash, now] });
    const message = {
      ID: ar.id,
      AppID: ar.app_id,
      UserID: ar.user_id,
      Status: 'approved',
      Catalogue: ar.catalogue,
      Client: ar.app_name,
      Plan: ar.plan,
      Products: ar.products,
      AuthType: ar.auth_type,
      CreatedAt: time(ar.created_at),
      UpdatedAt: time(updated_at),
    };
    const credMessage = {
      AccessRequestID: ar.id,
      AppID: ar.app_id,
      UserID: ar.user_id,
      AuthType: ar.auth_type,
      OAuthClientID: '',
      CreatedAt: time(now),
    };
    const ids = [randomUUID(), randomUUID()];
    const at = Date.now();
    await c.query({
      ...EVENTS,
      values: [
        ids,
        ['AccessRequestApproved', 'CredentialRegistered'],
        [JSON.stringify(message), JSON.stringify(credMessage)],
        [new Date(at), new Date(at + 1)],
        ids.join(','),
      ],
    });
    await c.query('COMMIT');
    return {
      ...message,
      Products: ar.products.join(', '),
      User: ar.user_ref,
      DCREnabled: ar.dcr_enabled,
      ProvisionImmediately: ar.provision_immediately,
      Credentials: [{ AccessRequest: `AccessRequest#${ar.id}`, Credential: secret, CredentialHash: hash, Expires: '' }],
      DeletedAt: '',
    };
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
});

app.get('/health/ready', async () => ({ status: 'ok' }));

app.listen({ port: Number(process.env.EQ_PORT), host: '127.0.0.1' }).then(() => process.stdout.write('READY\n'));
const shutdown = () =>
  app
    .close()
    .then(() => db.end())
    .finally(() => process.exit(0));
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
