import { connect } from 'node:net';
import { seedUser } from './helpers/dashboard';
import { useService } from './helpers/use-service';
import { TEST_SECRETS } from './helpers/test-env';

/** Sends a request head promising `contentLength` bytes, then only `sent` of them, and returns the raw answer. */
function promiseABody(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  contentLength: number,
  sent: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer while the body was still outstanding; got: ${answer}`));
    }, 5_000);
    socket.on('data', (d) => {
      answer += d;
      if (/\r\n\r\n[\s\S]*\}/.test(answer)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (answer) resolve(answer);
      else reject(err);
    });
    const head = Object.entries({
      host: 'localhost',
      'content-type': 'application/json',
      'content-length': String(contentLength),
      ...headers,
    })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n${sent}`);
  });
}

const statusOf = (raw: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('authentication comes before the body is parsed', () => {
  const t = useService();
  let port: number;

  beforeAll(async () => {
    port = Number(new URL(t.baseUrl).port);
  });

  const FAMILIES = [
    {
      name: 'gateway',
      method: 'POST',
      path: '/gateway/apis/oas',
      status: 403,
      body: { status: 'error', message: 'Attempted administrative access with invalid or missing key!' },
    },
    {
      name: 'gateway analytics',
      method: 'POST',
      path: '/gateway/analytics',
      status: 403,
      body: { status: 'error', message: 'Attempted administrative access with invalid or missing key!' },
    },
    {
      name: 'admin',
      method: 'POST',
      path: '/admin/users',
      status: 401,
      body: { Status: 'Error', Message: 'Not authorised', Meta: null },
    },
    {
      name: 'dashboard',
      method: 'POST',
      path: '/api/users',
      status: 401,
      body: { Status: 'Error', Message: 'Not authorised', Meta: null },
    },
    {
      name: 'portal',
      method: 'POST',
      path: '/portal-api/apps',
      status: 401,
      body: { status: 'error', errors: ['Not authorised: missing or invalid API token'] },
    },
  ];

  it.each(FAMILIES)(
    '$name: malformed JSON from an anonymous caller is a $status, not a parse error',
    async ({ method, path, status, body }) => {
      for (const raw of ['{bad', '['.repeat(100_000), '{"Name":"\\u0000"}']) {
        const res = await t.http.send(method, path, { raw, headers: { 'content-type': 'application/json' } });
        expect([raw.slice(0, 10), res.status, res.body]).toEqual([raw.slice(0, 10), status, body]);
      }
    },
  );

  it.each(FAMILIES)(
    '$name: an anonymous caller is refused before its body has even arrived',
    async ({ method, path, status, body }) => {
      // 30 MiB announced, a few bytes sent: an answer now means the body was never waited for, let alone parsed
      const raw = await promiseABody(port, method, path, {}, 30 * 1024 * 1024, '[{"a":');
      expect(statusOf(raw)).toBe(status);
      expect(bodyOf(raw)).toEqual(body);
    },
  );

  it('a wrong credential is refused the same way, and the right one gets the body parsed', async () => {
    const wrong = await promiseABody(
      port,
      'POST',
      '/portal-api/apps',
      { authorization: 'not-the-token' },
      1024 * 1024,
      '{',
    );
    expect(statusOf(wrong)).toBe(401);
    const bad = await t.http.send('POST', '/portal-api/apps', {
      raw: '{bad',
      headers: { authorization: TEST_SECRETS.PORTAL_API_TOKEN, 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ status: 'error', errors: ['request body is not valid JSON'] });
  });

  it('a dashboard user without the permission gets its 403 before its body is parsed, or has even arrived', async () => {
    const reader = await seedUser(t, { org: 'acme', permissions: { apis: 'read' } });
    const forbidden = {
      Status: 'Error',
      Message: 'access denied: You do not have permission to access /api/users',
      Meta: null,
    };
    const denied = await reader.http.post('/api/users', { email_address: 'x@example.com' });
    expect([denied.status, denied.body]).toEqual([403, forbidden]);
    const auth = { authorization: `Bearer ${reader.key}` };
    for (const raw of ['{bad', '['.repeat(100_000), '{"first_name":"\u0000"}']) {
      const res = await t.http.send('POST', '/api/users', { raw, headers: { ...auth, 'content-type': 'text/plain' } });
      expect([raw.slice(0, 10), res.status, res.body]).toEqual([raw.slice(0, 10), 403, forbidden]);
    }
    const early = await promiseABody(port, 'POST', '/api/users', auth, 30 * 1024 * 1024, '[{"a":');
    expect([statusOf(early), bodyOf(early)]).toEqual([403, forbidden]);
    // a route the user may use still reads (and refuses) what it was sent
    const writer = await seedUser(t, { org: 'acme', permissions: { users: 'write' } });
    const bad = await t.http.send('POST', '/api/users', {
      raw: '{bad',
      headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
    });
    expect([bad.status, bad.body]).toEqual([
      400,
      { Status: 'Error', Message: 'request body is not valid JSON', Meta: null },
    ]);
  });
});
