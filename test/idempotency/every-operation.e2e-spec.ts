import { connect } from 'node:net';
import { familyOf } from '../../src/common/errors/families';
import { seedUser } from '../helpers/dashboard';
import { useService } from '../helpers/use-service';
import { TEST_SECRETS } from '../helpers/test-env';

interface Operation {
  method: string;
  path: string;
  family: string;
}

/** Sends bytes as they are (header values no HTTP client would send) and reads the answer. */
function rawRequest(port: number, head: string, body = ''): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        Buffer.concat([
          Buffer.from(head, 'latin1'),
          Buffer.from(`Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`),
        ]),
      ),
    );
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      const payload = text.slice(text.indexOf('\r\n\r\n') + 4);
      // a chunked body is one chunk here: its size line, the JSON, the closing chunk
      const json = /^\s*[0-9a-f]+\r\n/.test(payload) ? payload.split('\r\n')[1] : payload;
      let parsed: unknown;
      try {
        parsed = JSON.parse(json);
      } catch {
        parsed = json;
      }
      resolve({ status, body: parsed });
    });
  });
}

/**
 * Idempotency-Key across every write operation of the service's own OpenAPI document (so routes added later are
 * covered): hostile key values never reach the operation and never cause a 5xx; each is refused in the family's
 * own error body, and nothing is stored.
 */
describe('Idempotency-Key on every write operation of /docs-json', () => {
  const t = useService({ vars: { ROLE: 'api' } });
  let operations: Operation[];
  const credentials: Record<string, string> = {};

  beforeAll(async () => {
    const doc = (await t.http.get('/docs-json')).body;
    operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item)
        .filter(([, op]) => (op.parameters ?? []).some((p: any) => p.in === 'header' && p.name === 'Idempotency-Key'))
        .map(([method]) => ({ method: method.toUpperCase(), path, family: familyOf(path) })),
    );
    const admin = await seedUser(t, { org: '' });
    credentials.portal = `Authorization: ${TEST_SECRETS.PORTAL_API_TOKEN}\r\n`;
    credentials.dashboard = `Authorization: Bearer ${admin.key}\r\n`;
    credentials.admin = `Admin-Auth: ${TEST_SECRETS.ADMIN_SECRET}\r\n`;
  });

  /** The family's validation failure naming the header (or, for what the HTTP parser refuses, its 400). */
  function expectRefused(op: Operation, res: { status: number; body: any }, what: string): void {
    const where = `${op.method} ${op.path} with ${what}`;
    const reason = expect.stringMatching(/^Idempotency-Key: |^the request could not be parsed as HTTP$/);
    const status = op.family === 'portal' ? [400, 422] : [400];
    expect({ where, refused: status.includes(res.status) }).toEqual({ where, refused: true });
    const body =
      op.family === 'portal' ? { status: 'error', errors: [reason] } : { Status: 'Error', Message: reason, Meta: null };
    expect({ where, body: res.body }).toEqual({ where, body });
  }

  it('covers the writes of the portal, dashboard and admin families', () => {
    const families = new Set(operations.map((o) => o.family));
    expect([...families].sort()).toEqual(['admin', 'dashboard', 'portal']);
    expect(operations.length).toBeGreaterThan(15);
  });

  it('refuses hostile keys on every operation before it runs, in the family error body, storing nothing', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const hostile: [string, string][] = [
      ['an over-long key', 'x'.repeat(256)],
      ['a very long key', 'y'.repeat(10_000)],
      ['a control character', 'a\u0001b'],
      ['a tab', 'a\tb'],
      ['a non-ASCII byte', 'caf\u00e9'],
      ['a NUL escape', '"a\\u0000"'],
      ['an unterminated string', '"abc'],
      ['parameters', '"abc";x=1'],
      ['a space', 'a b'],
      ['an empty value', ''],
    ];
    for (const op of operations) {
      const path = op.path.replace(/\{[^}]+\}/g, '1');
      const head = (k: string) =>
        `${op.method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${credentials[op.family]}Content-Type: application/json\r\n` +
        `Idempotency-Key: ${k}\r\n`;
      for (const [what, value] of hostile) {
        const res = await rawRequest(port, head(value), '{}');
        expectRefused(op, res, what);
      }
      const twice = await rawRequest(port, head('a') + 'Idempotency-Key: a\r\n', '{}');
      expectRefused(op, twice, 'two keys');
    }
    expect(await t.db.query(`SELECT key FROM idempotency_keys`)).toEqual([]);
  });

  it('ignores the header on reads and on the gateway family', async () => {
    const read = await t.http.get('/portal-api/apps', {
      authorization: TEST_SECRETS.PORTAL_API_TOKEN,
      'idempotency-key': 'x'.repeat(300),
    });
    expect(read.status).toBe(200);
    const gateway = await t.http.get('/gateway/apis/oas', {
      'x-gateway-authorization': TEST_SECRETS.GATEWAY_SECRET,
      'idempotency-key': 'x'.repeat(300),
    });
    expect(gateway.status).toBe(200);
    expect(await t.db.query(`SELECT key FROM idempotency_keys`)).toEqual([]);
  });
});
