import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { validate } from '@readme/openapi-parser';
import { IsString } from 'class-validator';
import { randomBytes } from 'node:crypto';
import { AdminAuth, DashboardAuth, GatewayAuth, PortalAuth } from '../src/common/auth';
import { sha256Hex } from '../src/common/crypto/secret-box';
import { useService } from './helpers/use-service';
import { TEST_SECRETS } from './helpers/test-env';

class ProbeDto {
  @IsString() Name: string;
}

/** One route per family, so the guards and error bodies are proven before any feature exists. */
@GatewayAuth()
@Controller('gateway/probe')
class GatewayProbe {
  @Post() ok(@Body() b: ProbeDto) {
    return { ok: b.Name };
  }
}
@AdminAuth()
@Controller('admin/probe')
class AdminProbe {
  @Post() ok(@Body() b: ProbeDto) {
    return { ok: b.Name };
  }
}
@PortalAuth()
@Controller('portal-api/probe')
class PortalProbe {
  @Post() ok(@Body() b: ProbeDto) {
    return { ok: b.Name };
  }
}
@Controller('api/probe')
class DashboardProbe {
  @Get() @DashboardAuth('apis', 'read') read() {
    return { ok: true };
  }
  @Post() @DashboardAuth('users', 'write') ok(@Body() b: ProbeDto) {
    return { ok: b.Name };
  }
}
@Module({ controllers: [GatewayProbe, AdminProbe, PortalProbe, DashboardProbe] })
class ProbeModule {}

describe('foundation', () => {
  const t = useService({ extraModules: [ProbeModule] });
  const accessKey = randomBytes(16).toString('hex');
  const inactiveKey = randomBytes(16).toString('hex');
  const readerKey = randomBytes(16).toString('hex');

  /** A dashboard user of org1 written straight to its table, opened by `key`. */
  const insertUser = (email: string, active: boolean, permissions: Record<string, string>, key: string) =>
    t.db.query(
      `INSERT INTO dashboard_users (id, org_id, email_address, first_name, last_name, active, user_permissions, access_key_hash, access_key_encrypted)
       VALUES ($1, 'org1', $2, 'A', 'B', $3, $4, $5, 'x')`,
      [randomBytes(12).toString('hex'), email, active, permissions, sha256Hex(key)],
    );

  beforeAll(async () => {
    await insertUser('admin@example.com', true, { IsAdmin: 'admin' }, accessKey);
    await insertUser('off@example.com', false, { IsAdmin: 'admin' }, inactiveKey);
    await insertUser('reader@example.com', true, { apis: 'read', users: 'read' }, readerKey);
  });

  it('answers liveness and readiness with Postgres and Redis reachable', async () => {
    expect((await t.http.get('/health')).body).toEqual({ status: 'ok' });
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details).toEqual({ postgres: { status: 'up' }, redis: { status: 'up' } });
  });

  it('serves a valid OpenAPI 3 document at /docs-json and a page at /docs', async () => {
    const doc = await t.http.get('/docs-json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    const result = await validate(doc.body);
    expect('errors' in result ? result.errors : []).toEqual([]);
    expect(result.valid).toBe(true);
    const page = await t.http.get('/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger');
  });

  describe('credentials: each family gets its own status and error body', () => {
    it('gateway: 403 with the gateway message', async () => {
      for (const headers of [
        {},
        { 'x-gateway-authorization': 'wrong' },
        { 'admin-auth': TEST_SECRETS.ADMIN_SECRET },
      ] as Record<string, string>[]) {
        const res = await t.http.post('/gateway/probe', { Name: 'x' }, headers);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          status: 'error',
          message: 'Attempted administrative access with invalid or missing key!',
        });
      }
      const ok = await t.http.post(
        '/gateway/probe',
        { Name: 'x' },
        { 'x-gateway-authorization': TEST_SECRETS.GATEWAY_SECRET },
      );
      expect(ok.status).toBe(201);
    });

    it('admin: 401 with the dashboard body', async () => {
      for (const headers of [
        {},
        { 'admin-auth': 'wrong' },
        { 'x-gateway-authorization': TEST_SECRETS.GATEWAY_SECRET },
        { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
      ] as Record<string, string>[]) {
        const res = await t.http.post('/admin/probe', { Name: 'x' }, headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ Status: 'Error', Message: expect.any(String), Meta: null });
      }
      expect(
        (await t.http.post('/admin/probe', { Name: 'x' }, { 'admin-auth': TEST_SECRETS.ADMIN_SECRET })).status,
      ).toBe(201);
    });

    it('portal: 401 with the portal body; bare token and Bearer both accepted', async () => {
      for (const headers of [
        {},
        { authorization: 'wrong-token-wrong-token' },
        { authorization: `Bearer ${accessKey}` },
        { 'admin-auth': TEST_SECRETS.ADMIN_SECRET },
      ] as Record<string, string>[]) {
        const res = await t.http.post('/portal-api/probe', { Name: 'x' }, headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ status: 'error', errors: [expect.any(String)] });
      }
      expect(
        (await t.http.post('/portal-api/probe', { Name: 'x' }, { authorization: TEST_SECRETS.PORTAL_API_TOKEN }))
          .status,
      ).toBe(201);
      expect(
        (
          await t.http.post(
            '/portal-api/probe',
            { Name: 'x' },
            { authorization: `Bearer ${TEST_SECRETS.PORTAL_API_TOKEN}` },
          )
        ).status,
      ).toBe(201);
    });

    it('dashboard: 401 for no, wrong, foreign or inactive credentials; 403 without the permission', async () => {
      for (const headers of [
        {},
        { authorization: 'Bearer nope' },
        { authorization: `Bearer ${TEST_SECRETS.PORTAL_API_TOKEN}` },
        { authorization: TEST_SECRETS.ADMIN_SECRET },
        { authorization: `Bearer ${inactiveKey}` },
      ] as Record<string, string>[]) {
        const res = await t.http.get('/api/probe', headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ Status: 'Error', Message: expect.any(String), Meta: null });
      }
      expect((await t.http.get('/api/probe', { authorization: `Bearer ${readerKey}` })).status).toBe(200);
      const denied = await t.http.post('/api/probe', { Name: 'x' }, { authorization: `Bearer ${readerKey}` });
      expect(denied.status).toBe(403);
      expect(denied.body).toEqual({
        Status: 'Error',
        Message: 'access denied: You do not have permission to access /api/probe',
        Meta: null,
      });
      expect((await t.http.post('/api/probe', { Name: 'x' }, { authorization: `Bearer ${accessKey}` })).status).toBe(
        201,
      );
    });
  });

  describe('bad bodies never reach a 500', () => {
    const cases: [string, Record<string, string>, number, (b: any) => void][] = [
      [
        '/gateway/probe',
        { 'x-gateway-authorization': TEST_SECRETS.GATEWAY_SECRET },
        400,
        (b) => expect(b).toEqual({ status: 'error', message: 'request malformed' }),
      ],
      [
        '/admin/probe',
        { 'admin-auth': TEST_SECRETS.ADMIN_SECRET },
        400,
        (b) => expect(b).toMatchObject({ Status: 'Error', Meta: null }),
      ],
      [
        '/portal-api/probe',
        { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
        422,
        (b) => expect(b).toEqual({ status: 'error', errors: ['request body is not valid JSON'] }),
      ],
    ];
    it.each(cases)('malformed JSON on %s gets the family status and body', async (path, headers, status, check) => {
      const res = await t.http.send('POST', path, { raw: '{"Name": ', headers });
      expect(res.status).toBe(status);
      check(res.body);
    });
    it.each(cases)(
      'valid JSON with a __proto__ member on %s is refused for what it is',
      async (path, headers, status) => {
        for (const raw of ['{"Name":"x","__proto__":{"a":1}}', '{"Name":{"constructor":{"prototype":{"a":1}}}}']) {
          const res = await t.http.send('POST', path, { raw, headers });
          expect(res.status).toBe(status);
          expect(JSON.stringify(res.body)).toContain('must not hold a member named __proto__');
        }
      },
    );

    it('validation failures: 422 on the portal naming the field, 400 elsewhere', async () => {
      const portal = await t.http.post(
        '/portal-api/probe',
        { Name: 5 },
        { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
      );
      expect(portal.status).toBe(422);
      expect(portal.body.errors).toEqual([expect.stringContaining('Name')]);
      const admin = await t.http.post('/admin/probe', { Name: 5 }, { 'admin-auth': TEST_SECRETS.ADMIN_SECRET });
      expect(admin.status).toBe(400);
      expect(admin.body.Message).toContain('Name');
    });

    it('an empty body with Content-Type: application/json is no body, not malformed JSON', async () => {
      const res = await t.http.send('POST', '/portal-api/probe', {
        raw: '',
        headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN, 'content-type': 'application/json' },
      });
      // no body: the route needs one (its DTO is not optional), which is not a JSON syntax error
      expect(res.status).toBe(422);
      expect(res.body.errors).toEqual(['body is required: a JSON object']);
    });

    it('a body over 1 MiB is a 413 in the family body', async () => {
      const big = JSON.stringify({ Name: 'x'.repeat(1024 * 1024 + 10) });
      const res = await t.http.send('POST', '/portal-api/probe', {
        raw: big,
        headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN },
      });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ status: 'error', errors: ['request body too large'] });
    });

    it('an unknown route is a 404 in the family body', async () => {
      const res = await t.http.get('/portal-api/nothing-here');
      expect(res.status).toBe(404);
      expect(res.body.status).toBe('error');
    });
  });

  it('echoes a request id on every response', async () => {
    const res = await t.http.get('/health', { 'x-request-id': 'abc-123' });
    expect(res.headers['x-request-id']).toBe('abc-123');
    expect((await t.http.get('/health')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
