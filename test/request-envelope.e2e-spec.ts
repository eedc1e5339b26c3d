import { connect } from 'node:net';
import { request } from 'undici';
import { ADMIN, GATEWAY, seedUser } from './helpers/dashboard';
import { REQUEST_TIMEOUT_MS } from '../src/common/errors/framework-errors';
import { useService } from './helpers/use-service';
import { TEST_SECRETS } from './helpers/test-env';

/**
 * What every request of the four families must be before its own validation: a body is JSON in UTF-8, sent
 * uncompressed (a form, text, XML, another charset or a content coding is the family's 400, portal 422, and is
 * never acted on), and a credential comes in one header (two are ambiguous: the family's 401/403).
 */
describe('request envelope: JSON bodies, one credential', () => {
  const t = useService();
  let dashboardKey: string;
  let seq = 0;

  beforeAll(async () => {
    dashboardKey = (await seedUser(t, { org: 'acme' })).key;
  });

  /** Sends `body` as is with the headers given as [name, value] pairs (repeated names kept apart). */
  async function send(method: string, path: string, headers: [string, string][], body?: string) {
    const res = await request(t.baseUrl + path, { method: method as never, headers: headers.flat(), body });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? JSON.parse(text) : undefined };
  }

  // a write of each family that succeeds with its JSON body, and what its refusal of the body looks like
  const WRITES = () => [
    {
      family: 'portal',
      path: '/portal-api/apps',
      credential: ['authorization', TEST_SECRETS.PORTAL_API_TOKEN] as [string, string],
      json: () => '{"Name":"envelope"}',
      form: 'Name=envelope',
      refused: (m: string) => ({ status: 422, body: { status: 'error', errors: [m] } }),
    },
    {
      family: 'dashboard',
      path: '/api/users',
      credential: ['authorization', `Bearer ${dashboardKey}`] as [string, string],
      json: () =>
        JSON.stringify({
          email_address: `env-${++seq}@example.com`,
          first_name: 'E',
          last_name: 'N',
          user_permissions: { apis: 'read' },
        }),
      form: 'email_address=env%40example.com&first_name=E&last_name=N',
      refused: (m: string) => ({ status: 400, body: { Status: 'Error', Message: m, Meta: null } }),
    },
    {
      family: 'admin',
      path: '/admin/users',
      credential: ['admin-auth', ADMIN['admin-auth']] as [string, string],
      json: () =>
        JSON.stringify({ email_address: `adm-${++seq}@example.com`, first_name: 'A', last_name: 'D', org_id: 'o' }),
      form: 'email_address=adm%40example.com&first_name=A&last_name=D&org_id=o',
      refused: (m: string) => ({ status: 400, body: { Status: 'Error', Message: m, Meta: null } }),
    },
    {
      family: 'gateway',
      path: '/gateway/analytics',
      credential: ['x-gateway-authorization', GATEWAY['x-gateway-authorization']] as [string, string],
      json: () => '[]',
      form: 'a=b',
      refused: (m: string) => ({ status: 400, body: { status: 'error', message: m } }),
    },
  ];

  const NOT_JSON = 'the body must be JSON: send Content-Type: application/json';

  it('refuses a body that is not JSON in UTF-8, in each family, and acts on none of them', async () => {
    const apps = async () =>
      (await t.http.get('/portal-api/apps', { authorization: TEST_SECRETS.PORTAL_API_TOKEN })).body;
    const appsBefore = await apps();
    for (const w of WRITES()) {
      const cases: [string, [string, string][], string, string][] = [
        ['a form', [['content-type', 'application/x-www-form-urlencoded']], w.form, NOT_JSON],
        ['JSON sent as XML', [['content-type', 'application/xml']], w.json(), NOT_JSON],
        ['JSON sent as another JSON type', [['content-type', 'application/vnd.api+json']], w.json(), NOT_JSON],
        ['no Content-Type', [], w.json(), NOT_JSON],
        [
          'another charset',
          [['content-type', 'application/json; charset=utf-16']],
          w.json(),
          'the body must be JSON in UTF-8 (charset=utf-8, or no charset)',
        ],
        [
          'a content coding',
          [
            ['content-type', 'application/json'],
            ['content-encoding', 'br'],
          ],
          w.json(),
          'Content-Encoding "br" is not supported: send the body uncompressed',
        ],
        [
          'gzip',
          [
            ['content-type', 'application/json'],
            ['content-encoding', 'gzip'],
          ],
          w.json(),
          'Content-Encoding "gzip" is not supported: send the body uncompressed',
        ],
      ];
      // JSON as text: the gateway product's tutorials send it so, and the gateway family takes it; no other does
      if (w.family !== 'gateway')
        cases.push(['JSON sent as text', [['content-type', 'text/plain']], w.json(), NOT_JSON]);
      for (const [what, headers, body, message] of cases) {
        const res = await send('POST', w.path, [w.credential, ...headers], body);
        expect([w.family, what, res]).toEqual([w.family, what, w.refused(message)]);
      }
      // the same body as JSON (with the charset spelled out, or identity coding) goes through
      for (const headers of [
        [['content-type', 'application/json; charset=UTF-8']],
        [
          ['content-type', 'Application/JSON'],
          ['content-encoding', 'identity'],
        ],
      ] as [string, string][][]) {
        const res = await send('POST', w.path, [w.credential, ...headers], w.json());
        expect([w.family, headers, res.status, res.status === 200 ? null : res.body]).toEqual([
          w.family,
          headers,
          200,
          null,
        ]);
      }
    }
    // the refused form created no app; the two JSON ones did
    expect((await apps()).length).toBe(appsBefore.length + 2);
  });

  it('reads JSON sent as text/plain on the gateway family, as JSON, under the same rules', async () => {
    const gw = WRITES().find((w) => w.family === 'gateway')!;
    const record = [
      {
        timestamp: '2026-11-20T10:00:00Z',
        org_id: 'acme',
        api_id: 'text-plain',
        api_name: 'Text',
        path: '/t',
        method: 'GET',
        code: 200,
        latency: 5,
        upstream_latency: 4,
        request_time: 5,
        oauth_id: 'text-plain-client',
        key: 'k',
        alias: 'a',
        url: '/t',
        iso_country: 'DE',
      },
    ];
    const sent = await send(
      'POST',
      gw.path,
      [gw.credential, ['content-type', 'text/plain; charset=utf-8']],
      JSON.stringify(record),
    );
    expect(sent.status).toBe(200);
    const read = await send('GET', '/api/activity/oauthid/text-plain-client/20/11/2026/20/11/2026', [
      ['authorization', `Bearer ${dashboardKey}`],
    ]);
    expect(read.body.data).toEqual([expect.objectContaining({ hits: 1, success: 1 })]);
    for (const body of ['[', 'not json'])
      expect(await send('POST', gw.path, [gw.credential, ['content-type', 'text/plain']], body)).toMatchObject({
        status: 400,
        body: { status: 'error' },
      });
    expect(await send('POST', gw.path, [gw.credential, ['content-type', 'text/plain; charset=latin1']], '[]')).toEqual(
      gw.refused('the body must be JSON in UTF-8 (charset=utf-8, or no charset)'),
    );
  });

  it('never reads the body of a GET, whatever its type, form or size', async () => {
    const users = await send('GET', '/api/users', [['authorization', `Bearer ${dashboardKey}`]]);
    expect(users.status).toBe(200);
    for (const [type, body] of [
      ['text/plain', 'x'],
      ['application/json', '{"a":'],
      ['application/x-www-form-urlencoded', 'a=b'],
      ['application/json', 'x'.repeat(1024 * 1024 + 1)],
    ]) {
      const res = await send(
        'GET',
        '/api/users',
        [
          ['authorization', `Bearer ${dashboardKey}`],
          ['content-type', type],
        ],
        body,
      );
      expect([type, body.length, res]).toEqual([type, body.length, users]);
    }
  });

  it('refuses a query parameter given twice on every route, in the family body, and acts on nothing', async () => {
    const apps = async () =>
      (await t.http.get('/portal-api/apps', { authorization: TEST_SECRETS.PORTAL_API_TOKEN })).body.length;
    const appsBefore = await apps();
    for (const w of WRITES()) {
      const res = await send(
        'POST',
        `${w.path}?a=1&a=2&b=3&c=x&c=y`,
        [w.credential, ['content-type', 'application/json']],
        w.json(),
      );
      const reasons = ['a is given more than once', 'c is given more than once'];
      expect([w.family, res]).toEqual([
        w.family,
        w.family === 'portal'
          ? { status: 422, body: { status: 'error', errors: reasons } }
          : { ...w.refused(reasons.join('; ')) },
      ]);
    }
    expect(await apps()).toBe(appsBefore);
    for (const [path, credential] of [
      ['/api/apis/groups', ['authorization', `Bearer ${dashboardKey}`]],
      ['/gateway/apis/oas', ['x-gateway-authorization', GATEWAY['x-gateway-authorization']]],
      ['/portal-api/apps/1', ['authorization', TEST_SECRETS.PORTAL_API_TOKEN]],
    ] as [string, [string, string]][]) {
      const res = await send('GET', `${path}?x=1&x=1`, [credential]);
      expect([path, res.status, JSON.stringify(res.body)]).toEqual([
        path,
        path.startsWith('/portal-api') ? 422 : 400,
        expect.stringContaining('x is given more than once'),
      ]);
    }
  });

  it('answers a path that starts with two slashes in the family body it names', async () => {
    for (const headers of [[['authorization', `Bearer ${dashboardKey}`]], []] as [string, string][][])
      expect(await send('GET', '//api/users', headers)).toEqual({
        status: 404,
        body: { Status: 'Error', Message: 'Cannot GET //api/users', Meta: null },
      });
    expect(await send('GET', '///portal-api/apps', [['authorization', TEST_SECRETS.PORTAL_API_TOKEN]])).toEqual({
      status: 404,
      body: { status: 'error', errors: ['Cannot GET ///portal-api/apps'] },
    });
  });

  it('refuses a JSON body holding bytes that are not UTF-8, in each family, instead of storing U+FFFD', async () => {
    // two bytes that UTF-8 never uses, inside a string (checked before the route's own validation)
    const body = Buffer.concat([Buffer.from('{"Name":"bad'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    for (const w of WRITES()) {
      const res = await request(t.baseUrl + w.path, {
        method: 'POST',
        headers: [...w.credential, 'content-type', 'application/json'],
        body,
      });
      const answer = { status: res.statusCode, body: JSON.parse(await res.body.text()) };
      expect([w.family, answer]).toEqual([
        w.family,
        w.refused('the body must be JSON in UTF-8: it holds bytes that are not UTF-8'),
      ]);
    }
  });

  it('refuses a query string holding a percent-escape that is not UTF-8, instead of reading U+FFFD', async () => {
    const message = 'the query string holds a percent-escape that is not UTF-8';
    const dashboard = await send('GET', '/api/apis?q=%FF', [['authorization', `Bearer ${dashboardKey}`]]);
    expect(dashboard).toEqual({ status: 400, body: { Status: 'Error', Message: message, Meta: null } });
    const portal = await send('GET', '/portal-api/apps?page=1&x=%C3', [
      ['authorization', TEST_SECRETS.PORTAL_API_TOKEN],
    ]);
    expect(portal).toEqual({ status: 422, body: { status: 'error', errors: [message] } });
    // UTF-8 escapes are read as sent
    const ok = await send('GET', '/api/apis?q=caf%C3%A9', [['authorization', `Bearer ${dashboardKey}`]]);
    expect(ok.status).toBe(200);
  });

  it('still refuses an anonymous caller first, whatever its body', async () => {
    const res = await send('POST', '/portal-api/apps', [['content-type', 'text/plain']], 'x');
    expect(res).toEqual({
      status: 401,
      body: { status: 'error', errors: ['Not authorised: missing or invalid API token'] },
    });
  });

  it('takes a bodiless write with or without a Content-Type', async () => {
    const app = (
      await t.http.post('/portal-api/apps', { Name: 'bodiless' }, { authorization: TEST_SECRETS.PORTAL_API_TOKEN })
    ).body;
    for (const headers of [[], [['content-type', 'application/json']], [['content-type', 'text/plain']]] as [
      string,
      string,
    ][][]) {
      const res = await send('GET', `/portal-api/apps/${app.ID}`, [
        ['authorization', TEST_SECRETS.PORTAL_API_TOKEN],
        ...headers,
      ]);
      expect([headers, res.status]).toEqual([headers, 200]);
    }
  });

  /** Sends `head` (request line and headers, CRLF-separated, no blank line) and `body` as they are: the status. */
  function sendRaw(head: string, body = ''): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (d) => {
        answer += d;
        const status = /^HTTP\/1\.1 (\d{3})/.exec(answer);
        if (status && answer.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(Number(status[1]));
        }
      });
      socket.on('error', reject);
      socket.write(`${head}\r\nhost: localhost\r\nconnection: close\r\n\r\n${body}`);
    });
  }

  it('takes a write without a body that still says Content-Type: application/json, with no Content-Length', async () => {
    // as `curl -X DELETE -H 'Content-Type: application/json'` sends it: neither Content-Length nor Transfer-Encoding
    const app = (
      await t.http.post('/portal-api/apps', { Name: 'to delete' }, { authorization: TEST_SECRETS.PORTAL_API_TOKEN })
    ).body;
    const status = await sendRaw(
      `DELETE /portal-api/apps/${app.ID} HTTP/1.1\r\nauthorization: ${TEST_SECRETS.PORTAL_API_TOKEN}\r\ncontent-type: application/json`,
    );
    expect(status).toBe(200);
    expect(
      (await t.http.get(`/portal-api/apps/${app.ID}`, { authorization: TEST_SECRETS.PORTAL_API_TOKEN })).status,
    ).toBe(404);
  });

  it('refuses a body sent with a transfer coding besides chunked, and takes one sent chunked alone', async () => {
    const body = '{"Name":"chunked"}';
    const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
    const head = (coding: string) =>
      `POST /portal-api/apps HTTP/1.1\r\nauthorization: ${TEST_SECRETS.PORTAL_API_TOKEN}\r\ncontent-type: application/json\r\ntransfer-encoding: ${coding}`;
    // the bytes are plain JSON here: what is refused is a coding the service would not undo
    expect(await sendRaw(head('gzip, chunked'), chunked)).toBe(422);
    expect(await sendRaw(head('chunked'), chunked)).toBe(200);
  });

  it('refuses a body sent with two Content-Types, whichever comes first', async () => {
    const body = '{"Name":"two types"}';
    for (const [first, second] of [
      ['application/json', 'text/plain'],
      ['text/plain', 'application/json'],
    ]) {
      const status = await sendRaw(
        `POST /portal-api/apps HTTP/1.1\r\nauthorization: ${TEST_SECRETS.PORTAL_API_TOKEN}\r\ncontent-type: ${first}\r\ncontent-type: ${second}\r\ncontent-length: ${body.length}`,
        body,
      );
      expect([first, status]).toEqual([first, 422]);
    }
  });

  it('refuses two credentials in each family, even two right ones, and takes one', async () => {
    const reads = [
      { path: '/portal-api/apps', name: 'authorization', right: TEST_SECRETS.PORTAL_API_TOKEN, status: 401 },
      { path: '/api/apis', name: 'authorization', right: `Bearer ${dashboardKey}`, status: 401 },
      { path: '/admin/users', name: 'admin-auth', right: ADMIN['admin-auth'], status: 401, method: 'POST' },
      {
        path: '/gateway/apis/oas',
        name: 'x-gateway-authorization',
        right: GATEWAY['x-gateway-authorization'],
        status: 403,
      },
    ];
    for (const r of reads) {
      const method = r.method ?? 'GET';
      for (const pair of [
        [r.right, 'wrong'],
        ['wrong', r.right],
        [r.right, r.right],
      ]) {
        const res = await send(method, r.path, [
          [r.name, pair[0]],
          [r.name, pair[1]],
        ]);
        expect([r.path, pair, res.status]).toEqual([r.path, pair, r.status]);
      }
      const once = await send(method, r.path, [[r.name, r.right]]);
      expect([r.path, once.status]).toEqual([r.path, method === 'POST' ? 400 : 200]);
    }
  });

  /** Sends `raw` as it is and reads the answer until the server closes: its status and parsed body. */
  function exchange(raw: string): Promise<{ status: number; body: unknown }> {
    return exchangeWithHead(raw).then(({ status, body }) => ({ status, body }));
  }

  /** As exchange, with the answer's header lines (lower-cased). */
  function exchangeWithHead(raw: string): Promise<{ status: number; body: unknown; head: string[] }> {
    return new Promise((resolve, reject) => {
      const socket = connect(Number(new URL(t.baseUrl).port), '127.0.0.1');
      let answer = '';
      socket.on('data', (d) => (answer += d));
      socket.on('close', () => {
        const [head, ...rest] = answer.split('\r\n\r\n');
        const text = rest.join('\r\n\r\n');
        const lines = head.split('\r\n');
        resolve({
          status: Number(lines[0].split(' ')[1]),
          body: text ? JSON.parse(text) : undefined,
          head: lines.slice(1).map((l) => l.toLowerCase()),
        });
      });
      socket.on('error', reject);
      socket.write(raw);
    });
  }

  it('answers a request whose announced body never arrives with a 408 in the family body, not never', async () => {
    const server = t.app.getHttpServer();
    const built = { requestTimeout: server.requestTimeout, headersTimeout: server.headersTimeout };
    expect(built.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(built.headersTimeout).toBeLessThan(REQUEST_TIMEOUT_MS);
    // the same limits, made short for the test (Node checks the request's only while the headers' is below it)
    Object.assign(server, { requestTimeout: 1000, headersTimeout: 500 });
    try {
      const started = Date.now();
      const partial = await exchangeWithHead(
        `POST /portal-api/apps HTTP/1.1\r\nhost: x\r\nauthorization: ${TEST_SECRETS.PORTAL_API_TOKEN}\r\n` +
          'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"Name":',
      );
      expect(partial).toMatchObject({
        status: 408,
        body: { status: 'error', errors: ['the request took too long to arrive'] },
      });
      expect(partial.head).toEqual(expect.arrayContaining(['cache-control: no-store']));
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      Object.assign(server, built);
    }
  });

  it("gives the family's private headers to every answer of a family, also those of no route and of the parser", async () => {
    const family = ['/portal-api/apps', '/api/apis', '/admin/users', '/gateway/apis/oas'];
    const answers = [
      // no route: an unknown path, a method without a route, CONNECT
      ...family.map((path) => `GET ${path}/nothing/here HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
      ...family.map((path) => `PURGE ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
      ...family.map((path) => `CONNECT ${path} HTTP/1.1\r\nhost: x\r\n\r\n`),
      // refused by the parser: a byte no header value may hold, a lower-case method
      ...family.map((path) => `GET ${path} HTTP/1.1\r\nhost: x\r\nx-a: \x7f\r\nconnection: close\r\n\r\n`),
      ...family.map((path) => `get ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
    ];
    for (const raw of answers) {
      const { status, head } = await exchangeWithHead(raw);
      expect([raw, status]).toEqual([raw, expect.any(Number)]);
      expect([raw, head]).toEqual([
        raw,
        expect.arrayContaining(['cache-control: no-store', 'x-content-type-options: nosniff']),
      ]);
    }
    // outside the families, nothing is added
    const health = await exchangeWithHead('get /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    expect(health.head).not.toContain('cache-control: no-store');
  });

  it('takes a request target in absolute form as the path it names, under the rules of its family', async () => {
    const portal = TEST_SECRETS.PORTAL_API_TOKEN;
    const host = `127.0.0.1:${new URL(t.baseUrl).port}`;
    const head = (target: string, ...lines: string[]) =>
      [`POST ${target} HTTP/1.1`, `host: ${host}`, 'connection: close', ...lines].join('\r\n') + '\r\n\r\n';
    const body = '{"Name":"absolute"}';
    // the credential, in the family's body
    expect(await exchange(head(`http://${host}/portal-api/apps`, `content-length: ${body.length}`) + body)).toEqual({
      status: 401,
      body: { status: 'error', errors: ['Not authorised: missing or invalid API token'] },
    });
    // the body rules: text is refused, not read as JSON
    const asText = head(
      `http://${host}/portal-api/apps`,
      `authorization: ${portal}`,
      'content-type: text/plain',
      `content-length: ${body.length}`,
    );
    expect(await exchange(asText + body)).toEqual({
      status: 422,
      body: { status: 'error', errors: ['the body must be JSON: send Content-Type: application/json'] },
    });
    const apps = (await t.http.get('/portal-api/apps', { authorization: portal })).body as { Name: string }[];
    expect(apps.map((a) => a.Name)).not.toContain('absolute');
    // and as JSON it is the route's own answer
    const asJson = head(
      `http://${host}/portal-api/apps`,
      `authorization: ${portal}`,
      'content-type: application/json',
      `content-length: ${body.length}`,
    );
    expect(await exchange(asJson + body)).toMatchObject({ status: 200, body: { Name: 'absolute' } });
    // a dashboard refusal names the path, as it does for a target in origin form
    const reader = await seedUser(t, { org: 'acme', permissions: { apis: 'read' } });
    const get = `GET http://user:pw@${host}/api/users HTTP/1.1\r\nhost: ${host}\r\nconnection: close\r\n`;
    expect(await exchange(`${get}authorization: Bearer ${reader.key}\r\n\r\n`)).toEqual({
      status: 403,
      body: { Status: 'Error', Message: 'access denied: You do not have permission to access /api/users', Meta: null },
    });
  });

  it('refuses an HTTP/1.1 request without Host, and one the parser refuses, in the family body; ignores an unknown Expect; opens no tunnel', async () => {
    expect(
      await exchange(`GET /api/apis HTTP/1.1\r\nauthorization: Bearer ${dashboardKey}\r\nconnection: close\r\n\r\n`),
    ).toEqual({
      status: 400,
      body: { Status: 'Error', Message: 'an HTTP/1.1 request must carry a Host header', Meta: null },
    });
    expect(await exchange('GET /portal-api/apps HTTP/1.1\r\nconnection: close\r\n\r\n')).toEqual({
      status: 400,
      body: { status: 'error', errors: ['an HTTP/1.1 request must carry a Host header'] },
    });
    // HTTP/1.0 has no Host
    expect((await exchange(`GET /api/apis HTTP/1.0\r\nauthorization: Bearer ${dashboardKey}\r\n\r\n`)).status).toBe(
      200,
    );
    // two Host lines (RFC 9112 §3.2): Node would keep the first, a proxy in front may have read the other
    expect(
      await exchange(
        `GET /api/apis HTTP/1.1\r\nhost: a\r\nhost: b\r\nauthorization: Bearer ${dashboardKey}\r\nconnection: close\r\n\r\n`,
      ),
    ).toEqual({
      status: 400,
      body: { Status: 'Error', Message: 'a request must carry one Host header, not several', Meta: null },
    });
    expect(await exchange('GET /portal-api/apps HTTP/1.0\r\nHost: a\r\nHOST: a\r\n\r\n')).toEqual({
      status: 400,
      body: { status: 'error', errors: ['a request must carry one Host header, not several'] },
    });
    // an expectation the server does not know is ignored: the route answers
    const expecting = await exchange(
      `GET /api/apis HTTP/1.1\r\nhost: x\r\nexpect: bogus\r\nauthorization: Bearer ${dashboardKey}\r\nconnection: close\r\n\r\n`,
    );
    expect(expecting).toEqual({ status: 200, body: { apis: [], pages: 0 } });
    // CONNECT opens no tunnel: the 404 of a method without a route, in the family's body
    expect(await exchange('CONNECT /portal-api/apps HTTP/1.1\r\nhost: x\r\n\r\n')).toEqual({
      status: 404,
      body: { status: 'error', errors: ['Cannot CONNECT /portal-api/apps'] },
    });
    expect(await exchange('CONNECT 127.0.0.1:22 HTTP/1.1\r\nhost: 127.0.0.1:22\r\n\r\n')).toEqual({
      status: 404,
      body: { statusCode: 404, message: 'Cannot CONNECT 127.0.0.1:22' },
    });
    // a lower-case method is no method to the parser: still the family's body
    expect(await exchange('get /gateway/apis/oas HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n')).toEqual({
      status: 400,
      body: { status: 'error', message: 'the request could not be parsed as HTTP' },
    });
  });

  it("takes a path with a trailing slash as the route's own, as the product's examples write /api/apis/?p=1", async () => {
    const dashboard: [string, string][] = [['authorization', `Bearer ${dashboardKey}`]];
    expect(await send('GET', '/api/apis/?p=1', dashboard)).toEqual(await send('GET', '/api/apis?p=1', dashboard));
    expect((await send('GET', '/api/apis/groups/', dashboard)).status).toBe(200);
    const portal: [string, string][] = [['authorization', TEST_SECRETS.PORTAL_API_TOKEN]];
    const made = await send(
      'POST',
      '/portal-api/apps/',
      [...portal, ['content-type', 'application/json']],
      '{"Name":"slash"}',
    );
    expect(made.status).toBe(200);
    expect(await send('GET', `/portal-api/apps/${made.body.ID}/`, portal)).toEqual({ status: 200, body: made.body });
    // one slash only: two are no route
    expect((await send('GET', '/api/apis//', dashboard)).status).toBe(404);
  });
});
