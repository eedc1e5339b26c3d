import fc from 'fast-check';
import { request } from 'undici';
import { familyOf } from '../src/common/errors/families';
import { createApi, EXT, oasDoc, seedUser } from './helpers/dashboard';
import { createAccessRequest, createApp } from './helpers/portal';
import { useService } from './helpers/use-service';
import { TEST_SECRETS } from './helpers/test-env';

/**
 * Hostile input against every operation of the service's own OpenAPI document (so routes added later
 * are covered without touching this file): generated bodies, path and query values of the kinds an
 * attacker tries (NUL, lone surrogates, deep nesting, nulls, huge numbers, malformed escapes, over-long
 * segments and query strings, wrong types and content types). Every answer must be below 500 (apart
 * from the documented 502 of dynamic client registration, not configured here), every 4xx must carry the
 * family's error body, and no body may show internal text.
 */

const SEED = Number(process.env.HOSTILE_SEED ?? 20261122);
const RUNS_PER_OPERATION = Number(process.env.HOSTILE_RUNS ?? 20);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  bodySchema?: Record<string, unknown>;
  security: string[];
}
interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const INTERNAL_TEXT = [
  /Maximum call stack/i,
  /FST_[A-Z_]+/,
  /\bat [\w.<>]+ \(?[^)]*\.(?:js|ts):\d+/, // a stack frame
  /node_modules/,
  /QueryFailedError|TypeORMError|EntityNotFound/,
  /\b(?:SELECT|INSERT INTO|UPDATE|DELETE FROM)\b.*\b(?:FROM|VALUES|SET|WHERE)\b/,
  /violates (?:not-null|foreign key|unique|check) constraint|invalid input syntax|invalid byte sequence|unsupported Unicode escape/i,
  /\b(?:TypeError|ReferenceError|RangeError): /,
];

const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800x',
  'x\udfff',
  '\udc00\ud800',
  '\ud83d',
  '%00',
  ' 1',
  '1 ',
  '01',
  '1e3',
  '0x1',
  '-1',
  '+1',
  '1.5',
  '99999999999999999999',
  '2147483648',
  '',
  ' ',
  '\t\r\n',
  "' OR 1=1 --",
  '"; DROP TABLE apps; --',
  '../../etc/passwd',
  '$ne',
  '__proto__',
  'constructor',
  '<script>alert(1)</script>',
  '\u202e\u200b',
  'null',
  'true',
  '{}',
  '[]',
  'x'.repeat(5000),
];
const HOSTILE_NUMBERS = [0, -1, -0, 1.5, 2147483648, 1e20, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2];

function nested(depth: number, leaf: Json = 1, asObject = false): Json {
  let v: Json = leaf;
  for (let i = 0; i < depth; i++) v = asObject ? { a: v } : [v];
  return v;
}

const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 }),
);
const hostileValue: fc.Arbitrary<Json> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 2, arbitrary: fc.constantFrom<Json>(null, true, false, [], {}, ...HOSTILE_NUMBERS) },
  { weight: 1, arbitrary: fc.constantFrom<Json>(nested(3000), nested(3000, 'x', true), nested(70, '\u0000')) },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileString, hostileString, { maxKeys: 2 }) },
);

/** Pre-encoded path segments that break the URL itself (bad escapes, NUL, spaces, over-long ones). */
const RAW_SEGMENTS = [
  '%ZZ',
  '%C0%AE',
  '%E0%A4%A',
  '%',
  '%00',
  '%201',
  '1%20',
  '%20',
  '%2e%2e',
  '%2F',
  '%ud800',
  'a'.repeat(2000),
  '0'.repeat(150) + '1',
];
/** Whole bodies that are not what any route expects. */
const RAW_BODIES = [
  '{bad',
  '',
  'null',
  '[]',
  '"\\u0000"',
  '1',
  '{"a":',
  '['.repeat(10000),
  '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
  '{"__proto__":{"x":1}}',
  '\u0000',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
];

function resolve(doc: any, schema: any): any {
  let s = schema;
  for (let i = 0; s && s.$ref && i < 20; i++)
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((o: any, k: string) => o?.[k], doc);
  return s;
}

/** A plausible value for a schema, so that hostile values can be placed one at a time inside valid-looking bodies. */
function plausible(doc: any, schema: any, depth = 0): Json {
  const s = resolve(doc, schema) ?? {};
  if (s.example !== undefined) return s.example;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  if (s.allOf) return Object.assign({}, ...s.allOf.map((x: any) => plausible(doc, x, depth + 1)));
  switch (s.type) {
    case 'string':
      return s.format === 'date-time' ? '2024-03-01T10:15:00Z' : s.format === 'uri' ? 'http://127.0.0.1:9/x' : 'x';
    case 'integer':
      return 1;
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return depth > 4 ? [] : [plausible(doc, s.items, depth + 1)];
    default: {
      const out: Record<string, Json> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) if (depth < 5) out[k] = plausible(doc, v, depth + 1);
      return out;
    }
  }
}

/** Every path (as a list of keys) inside a JSON value, the root included. */
function pathsOf(v: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(v)) v.forEach((x, i) => pathsOf(x, [...prefix, i], out));
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) pathsOf(x, [...prefix, k], out);
  return out;
}

function setAt(root: Json, path: (string | number)[], value: Json): Json {
  if (path.length === 0) return value;
  const copy: any = structuredClone(root);
  let o = copy;
  for (const k of path.slice(0, -1)) o = o[k];
  o[path[path.length - 1]] = value;
  return copy;
}

function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      ops.push({
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in })),
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
        security: (op.security ?? []).flatMap((s: Record<string, unknown>) => Object.keys(s)),
      });
    }
  }
  // deletions last, so the other operations meet existing rows
  return [...ops.filter((o) => o.method !== 'DELETE'), ...ops.filter((o) => o.method === 'DELETE')];
}

describe('hostile input on every route of /docs-json', () => {
  // role api: no delivery worker, so no webhook created here is ever called
  const t = useService({ vars: { ROLE: 'api' } });
  let doc: any;
  const credentials: Record<string, Record<string, string>> = {};
  /** Real values for path parameters by name (and any name), so hostile bodies reach existing rows. */
  const known: Record<string, string[]> = {};
  /** Known-good bodies by "METHOD path", mutated one hostile value at a time. */
  const goodBodies: Record<string, Json[]> = {};

  beforeAll(async () => {
    const res = await t.http.get('/docs-json');
    doc = res.body;
    const admin = await seedUser(t, { org: '' });
    const schemes = doc.components?.securitySchemes ?? {};
    const secretOf: Record<string, string> = {
      gateway: TEST_SECRETS.GATEWAY_SECRET,
      admin: TEST_SECRETS.ADMIN_SECRET,
      portal: TEST_SECRETS.PORTAL_API_TOKEN,
      dashboard: admin.key,
    };
    for (const [name, scheme] of Object.entries<any>(schemes)) {
      if (scheme.type === 'http' && scheme.scheme === 'bearer')
        credentials[name] = { authorization: `Bearer ${secretOf[name]}` };
      else if (scheme.type === 'apiKey' && scheme.in === 'header')
        credentials[name] = { [scheme.name.toLowerCase()]: secretOf[name] };
    }

    const portal = t.portal;
    const app = await createApp(portal, { Name: 'Target', RedirectURLs: 'https://app.example.com/cb' });
    const ar = await createAccessRequest(portal, { AppID: app.ID });
    const webhook = {
      Name: 'hook',
      URL: 'http://127.0.0.1:9/hook',
      Events: ['AccessRequestApproved'],
      Headers: [{ Name: 'X-A', Value: 'b' }],
    };
    const hook = (await portal.post('/portal-api/webhooks', webhook)).body;
    const header = (await portal.get(`/portal-api/webhooks/${hook.ID}/headers`)).body[0];
    const api = oasDoc({ org: '', categories: ['c'] });
    const apiId = await createApi(t, api);
    const record = {
      timestamp: '2024-03-01T10:15:00Z',
      org_id: '',
      api_id: apiId,
      api_name: 'Pets',
      path: '/pets',
      method: 'GET',
      code: 200,
      latency: 1,
      upstream_latency: 1,
      request_time: 1,
      oauth_id: 'client-1',
    };
    known.id = [String(app.ID), String(ar.ID), hook.ID, admin.id];
    known.headerId = [header.ID];
    known.apiID = [apiId];
    known.OAuthClientID = ['client-1'];
    known.startDay = ['1'];
    known.startMonth = ['3'];
    known.startYear = ['2024'];
    known.EndDay = ['31'];
    known.EndMonth = ['3'];
    known.EndYear = ['2024'];
    known['*'] = [...known.id, header.ID, apiId, '1'];
    goodBodies['POST /portal-api/apps'] = [
      { Name: 'A', Description: 'd', RedirectURLs: 'https://a.example/cb', UserID: 1, Visibility: 'team' },
    ];
    goodBodies['PUT /portal-api/apps/{id}'] = goodBodies['POST /portal-api/apps'];
    goodBodies['POST /portal-api/access_requests'] = [
      {
        AppID: app.ID,
        Catalogue: 'c',
        Plan: 'p',
        Products: ['x'],
        AuthType: 'authToken',
        DCREnabled: false,
        ProvisionImmediately: true,
        User: 'User#1',
      },
    ];
    goodBodies['POST /portal-api/webhooks'] = [webhook];
    goodBodies['PUT /portal-api/webhooks/{id}'] = [webhook];
    goodBodies['POST /gateway/apis/oas'] = [oasDoc({ org: 'acme', categories: ['a'] })];
    goodBodies['PUT /gateway/apis/oas/{apiID}'] = [api];
    goodBodies['PATCH /gateway/apis/oas/{apiID}'] = [api, { ...api, [EXT]: undefined }];
    goodBodies['POST /gateway/analytics'] = [[record]];
    goodBodies['POST /api/users'] = [
      {
        email_address: 'x@example.com',
        first_name: 'X',
        last_name: 'Y',
        active: true,
        user_permissions: { apis: 'read' },
        password: 'pw',
      },
    ];
    goodBodies['POST /admin/users'] = goodBodies['POST /api/users'];
  }, 60_000);

  const failures: string[] = [];
  const statuses: Record<number, number> = {};

  async function send(s: Sent): Promise<{ status: number; text: string; json: any }> {
    const res = await request(t.baseUrl + s.url, { method: s.method as never, headers: s.headers, body: s.body });
    const text = await res.body.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.statusCode, text, json };
  }

  /** Returns what is wrong with an answer, or undefined. */
  function judge(s: Sent, r: { status: number; text: string; json: any }): string | undefined {
    const family = familyOf(s.url);
    const dcr = r.status === 502 && /dynamic client registration/.test(r.text) && s.url.includes('/access_requests');
    if (r.status >= 500 && !dcr) return `status ${r.status}`;
    for (const re of INTERNAL_TEXT) if (re.test(r.text)) return `internal text ${re}`;
    if (r.status >= 400) {
      const b = r.json;
      const ok =
        family === 'gateway'
          ? b && b.status === 'error' && typeof b.message === 'string' && Object.keys(b).length === 2
          : family === 'dashboard' || family === 'admin'
            ? b &&
              b.Status === 'Error' &&
              typeof b.Message === 'string' &&
              b.Meta === null &&
              Object.keys(b).length === 3
            : family === 'portal'
              ? b &&
                b.status === 'error' &&
                Array.isArray(b.errors) &&
                b.errors.every((e: unknown) => typeof e === 'string') &&
                Object.keys(b).length === 2
              : b && typeof b.message === 'string';
      if (!ok) return `not the ${family} error body`;
    }
    return undefined;
  }

  async function check(s: Sent): Promise<boolean> {
    let wrong: string | undefined;
    let r = { status: 0, text: '', json: undefined as any };
    try {
      r = await send(s);
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      wrong = judge(s, r);
    } catch (err) {
      wrong = `request failed: ${String(err)}`;
    }
    if (wrong)
      failures.push(
        `${s.method} ${s.url.slice(0, 200)} ${JSON.stringify((s.body ?? '').slice(0, 200))}: ${wrong}: ${r.text.slice(0, 300)}`,
      );
    return !wrong;
  }

  function url(op: Operation, segments: Record<string, string>, query: string): string {
    const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => segments[name]);
    return query ? `${path}?${query}` : path;
  }

  function realSegments(op: Operation): Record<string, string> {
    const out: Record<string, string> = {};
    for (const p of op.params.filter((x) => x.in === 'path'))
      out[p.name] = encodeURIComponent((known[p.name] ?? known['*'])[0]);
    return out;
  }

  function authHeaders(op: Operation): Record<string, string> {
    return Object.assign({}, ...op.security.map((name) => credentials[name] ?? {}));
  }

  it('answers every generated request without a 5xx, in the family error body, without internal text', async () => {
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(20);
    process.stdout.write(`hostile input: ${ops.length} operations, seed ${SEED}, ${RUNS_PER_OPERATION} runs each\n`);

    for (const op of ops) {
      const pathParams = op.params.filter((p) => p.in === 'path');
      const queryParams = op.params.filter((p) => p.in === 'query').map((p) => p.name);
      const key = `${op.method} ${op.path}`;
      const seeds: Json[] = goodBodies[key] ?? (op.bodySchema ? [plausible(doc, op.bodySchema)] : []);

      // fixed cases: each broken path segment in each parameter, a 100 KB query string, each raw body
      for (const p of pathParams) {
        for (const raw of RAW_SEGMENTS)
          await check({
            method: op.method,
            url: url(op, { ...realSegments(op), [p.name]: raw }, ''),
            headers: authHeaders(op),
          });
      }
      await check({
        method: op.method,
        url: url(op, realSegments(op), `q=${'a'.repeat(100_000)}`),
        headers: authHeaders(op),
      });
      if (op.method !== 'GET' && op.method !== 'DELETE') {
        for (const body of RAW_BODIES)
          await check({
            method: op.method,
            url: url(op, realSegments(op), ''),
            headers: { ...authHeaders(op), 'content-type': 'application/json' },
            body,
          });
      }

      // generated cases
      const sentArb = fc.record({
        segments: fc.record(
          Object.fromEntries(
            pathParams.map((p) => [
              p.name,
              fc.oneof(
                fc.constantFrom(...(known[p.name] ?? known['*'])).map(encodeURIComponent),
                hostileString.map(encodeURIComponent),
                fc.constantFrom(...RAW_SEGMENTS),
              ),
            ]),
          ),
        ),
        query: fc.array(
          fc.tuple(
            fc.oneof(fc.constantFrom(...(queryParams.length ? queryParams : ['q'])), hostileString),
            fc.oneof(hostileString, fc.constantFrom('1', 'true', '-1', '99999999999999999999')),
          ),
          { maxLength: 3 },
        ),
        body:
          seeds.length || op.bodySchema
            ? fc.tuple(fc.constantFrom(...(seeds.length ? seeds : [{}])), fc.nat(), hostileValue, fc.boolean())
            : fc.constant(undefined),
        contentType: fc.oneof(
          { weight: 8, arbitrary: fc.constant('application/json') },
          { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
        ),
        auth: fc.oneof(
          { weight: 9, arbitrary: fc.constant('valid') },
          { weight: 1, arbitrary: fc.constantFrom('none', 'wrong') },
        ),
      });
      await fc
        .assert(
          fc.asyncProperty(sentArb, async (g) => {
            const query = g.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
            const headers =
              g.auth === 'valid'
                ? authHeaders(op)
                : g.auth === 'wrong'
                  ? Object.fromEntries(Object.keys(authHeaders(op)).map((h) => [h, 'wrong']))
                  : {};
            let body: string | undefined;
            if (g.body) {
              const [seed, pick, value, second] = g.body;
              const paths = pathsOf(seed);
              let mutated = setAt(seed, paths[pick % paths.length], value);
              if (second) mutated = setAt(mutated, pathsOf(mutated)[(pick * 7 + 3) % pathsOf(mutated).length], null);
              body = JSON.stringify(mutated);
              headers['content-type'] = g.contentType;
            }
            return check({ method: op.method, url: url(op, g.segments, query), headers, body });
          }),
          { seed: SEED, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
        )
        .catch(() => undefined); // every failure is collected below, with its request
    }
    process.stdout.write(`hostile input: answers by status ${JSON.stringify(statuses)}\n`);
    expect(failures).toEqual([]);
  }, 180_000);
});
