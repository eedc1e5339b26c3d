'use strict';
// The API baseline: a bare Fastify server running the same SQL as the service through `pg` (pool of the
// same size, statements prepared as the service prepares them), with no framework, ORM, validation or mapping
// beyond building the JSON.
// Both answer the service's bodies exactly (the bench compares them before it measures).
// Env: BASE_DATABASE_URL, BASE_PORT, BASE_PORTAL_TOKEN, BASE_ENCRYPTION_KEY (hex), BASE_POOL (20), BASE_PAGE_SIZE (10).
const { createHash, timingSafeEqual } = require('node:crypto');
const { join } = require('node:path');
const Fastify = require('fastify');
const { Pool } = require('pg');

// the service's own SQL (the builder for GET /api/apis, the one statement of GET /portal-api/access_requests/{id}),
// so both run exactly the same statements
const { buildApiListQuery, commaList } = require(
  join(__dirname, '..', '..', 'dist', 'dashboard', 'apis', 'api-list.query.js'),
);
const { GET_ONE: ACCESS_REQUEST } = require(
  join(__dirname, '..', '..', 'dist', 'portal', 'access-requests', 'access-request.sql.js'),
);
// and its own pieces for what both must do alike: opening sealed columns, the portal's times, statement names
const { SecretBox } = require(join(__dirname, '..', '..', 'dist', 'common', 'crypto', 'secret-box.js'));
const { portalTime, UNSET_PORTAL_TIME } = require(join(__dirname, '..', '..', 'dist', 'common', 'http', 'time.js'));
const { PreparingClient } = require(join(__dirname, '..', '..', 'dist', 'database', 'data-source.js'));

const db = new Pool({
  connectionString: process.env.BASE_DATABASE_URL,
  max: Number(process.env.BASE_POOL || 20),
  idleTimeoutMillis: Number(process.env.BASE_POOL_IDLE_MS), // the service's POOL_IDLE_MS, from the bench
});
const pageSize = Number(process.env.BASE_PAGE_SIZE || 10);
// every statement prepared once per connection, as the service's pool does (named by a digest of its text)
const run = (text, values) => db.query({ name: PreparingClient.statementName(text), text, values });
const token = process.env.BASE_PORTAL_TOKEN;
const sha = (v) => createHash('sha256').update(v).digest();

const USER = `SELECT id, org_id, email_address, first_name, last_name, active, user_permissions, access_key_hash, access_key_encrypted, password_hash,
                     group_id, password_max_days, api_model, created_at, last_login_date, password_updated
                FROM dashboard_users WHERE access_key_hash = $1 LIMIT 1`;

const app = Fastify({ logger: false });

// the service's body, field for field: every credential's sealed columns opened with the service's own SecretBox
// (AES-256-GCM), times in the portal's format by the service's own function
const box = new SecretBox({ secrets: { encryptionKey: Buffer.from(process.env.BASE_ENCRYPTION_KEY, 'hex') } });
const open = (sealed) => box.decryptNullable(sealed);
const time = (t) => portalTime(t ? new Date(t) : null);

app.get('/portal-api/access_requests/:id', async (req, reply) => {
  const given = String(req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  if (!timingSafeEqual(sha(given), sha(token)))
    return reply.code(401).send({ status: 'error', errors: ['Not authorised'] });
  const id = Number(req.params.id);
  const row = (await run(ACCESS_REQUEST, [id])).rows[0];
  if (!row) return reply.code(404).send({ status: 'error', errors: ['not found'] });
  const { ar, app: a, credentials } = row;
  return {
    ID: ar.id,
    AppID: ar.app_id,
    Catalogue: ar.catalogue,
    Client: a.name,
    Plan: ar.plan,
    User: ar.user_ref,
    AuthType: ar.auth_type,
    DCREnabled: ar.dcr_enabled,
    ProvisionImmediately: ar.provision_immediately,
    Status: ar.status,
    ProductIDs: ar.product_ids,
    PlanID: ar.plan_id,
    Credentials: credentials.map((c) => ({
      AccessRequest: `AccessRequest#${c.access_request_id}`,
      Credential: open(c.credential_encrypted),
      CredentialHash: c.credential_hash ?? '',
      DCRRegistrationAccessToken: open(c.dcr_registration_access_token_encrypted),
      DCRRegistrationClientURI: c.dcr_registration_client_uri,
      DCRResponse: open(c.dcr_response_encrypted),
      Expires: time(c.expires_at),
      OAuthClientID: c.oauth_client_id,
      OAuthClientSecret: open(c.oauth_client_secret_encrypted),
      RedirectURI: c.redirect_uri,
      ResponseType: c.response_type,
      Scope: c.scope,
      TokenEndpoints: c.token_endpoints,
    })),
    CreatedAt: time(ar.created_at),
    UpdatedAt: time(ar.updated_at),
    DeletedAt: UNSET_PORTAL_TIME,
    Products: ar.products.join(', '),
  };
});

app.get('/api/apis', async (req, reply) => {
  const m = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? '').trim());
  if (!m) return reply.code(401).send({ Status: 'Error', Message: 'Not authorised', Meta: null });
  const user = (await run(USER, [sha(m[1]).toString('hex')])).rows[0];
  if (!user || !user.active) return reply.code(401).send({ Status: 'Error', Message: 'Not authorised', Meta: null });
  const q = req.query;
  const p = q.p ? Number(q.p) : 1;
  const [text, params] = buildApiListQuery(
    {
      orgId: user.org_id,
      apiType: q.api_type,
      categories: commaList(q.category),
      authTypes: commaList(q.auth_type),
      baseOnly: q.base_apis !== undefined && q.base_apis !== 'false' && q.base_apis !== '0',
      q: q.q,
    },
    q.sort ?? '-created_at',
    (p - 1) * pageSize,
    pageSize,
  );
  const { total, apis } = (await run(text, params)).rows[0];
  return { apis: apis.map((entry) => ({ api_definition: entry })), pages: Math.ceil(total / pageSize) };
});

app.listen({ port: Number(process.env.BASE_PORT), host: '127.0.0.1' }).then(() => process.stdout.write('READY\n'));
const shutdown = () =>
  app
    .close()
    .then(() => db.end())
    .finally(() => process.exit(0));
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
