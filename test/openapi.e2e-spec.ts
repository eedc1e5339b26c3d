import { maxHeaderSize } from 'node:http';
import Ajv from 'ajv';
import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ModulesContainer } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import { request } from 'undici';
import { previewOpenApiDocument, ROUTE_BODY_LIMITS } from '../src/bootstrap';
import { DEFAULT_BODY_LIMIT } from '../src/common/http/input-policy';
import { validationRules } from '../src/common/http/validation.openapi';
import { ADMIN, createApi, GATEWAY, oasDoc, seedUser } from './helpers/dashboard';
import { eventually } from './helpers/eventually';
import { HttpResponse } from './helpers/http-client';
import { OpenApiSchemas } from './helpers/openapi-schema';
import { TEST_SECRETS } from './helpers/test-env';
import { useService } from './helpers/use-service';

type Operation = {
  operationId?: string;
  summary?: string;
  parameters?: { name: string; in: string; schema?: any }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
  responses?: Record<
    string,
    { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown }> }
  >;
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** What the contract says each route family answers a missing credential and invalid input with, and in what body. */
const FAMILIES = {
  gateway: { prefix: '/gateway/', credential: '403', validation: '400', body: 'GatewayErrorBody' },
  dashboard: { prefix: '/api/', credential: '401', validation: '400', body: 'DashboardErrorBody' },
  admin: { prefix: '/admin/', credential: '401', validation: '400', body: 'DashboardErrorBody' },
  portal: { prefix: '/portal-api/', credential: '401', validation: '422', body: 'PortalErrorBody' },
};
type FamilyName = keyof typeof FAMILIES;
const familyOfPath = (path: string) =>
  (Object.keys(FAMILIES) as FamilyName[]).find((f) => path.startsWith(FAMILIES[f].prefix));

let users = 0;
/** A new dashboard user's required fields. */
const newUser = (name: string) => ({
  email_address: `${name}${++users}@example.com`,
  first_name: name,
  last_name: 'User',
});

/** The longest path segment the service routes (a longer one in a parameter is a 414). */
const MAX_SEGMENT = 1024;

/** The keywords the document should carry for a class-validator rule, by the rule's name. */
const RULE_KEYWORDS: Record<string, (constraints: unknown[]) => Record<string, unknown>> = {
  isInt: () => ({ type: 'integer' }),
  min: ([v]) => ({ minimum: v }),
  max: ([v]) => ({ maximum: v }),
  minLength: ([v]) => ({ minLength: v }),
  maxLength: ([v]) => ({ maxLength: v }),
  arrayMinSize: ([v]) => ({ minItems: v }),
  arrayMaxSize: ([v]) => ({ maxItems: v }),
  arrayNotEmpty: () => ({ minItems: 1 }),
};

/** The class of every route's `@Query()` DTO, by "METHOD /path" as the document names the route. */
function queryDtos(container: ModulesContainer): Map<string, Type> {
  const out = new Map<string, Type>();
  const join = (...parts: unknown[]) =>
    '/' +
    parts
      .flatMap((p) => String(p ?? '').split('/'))
      .filter(Boolean)
      .join('/')
      .replace(/:(\w+)/g, '{$1}');
  for (const module of container.values()) {
    for (const { metatype } of module.controllers.values()) {
      if (typeof metatype !== 'function') continue;
      for (const name of Object.getOwnPropertyNames(metatype.prototype)) {
        const handler = metatype.prototype[name];
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        const route = `${RequestMethod[method]} ${join(Reflect.getMetadata(PATH_METADATA, metatype), Reflect.getMetadata(PATH_METADATA, handler))}`;
        const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, metatype, name) ?? {};
        const types = Reflect.getMetadata('design:paramtypes', metatype.prototype, name) ?? [];
        for (const [key, arg] of Object.entries<{ index: number; data?: unknown }>(args))
          if (key.split(':')[0] === String(RouteParamtypes.QUERY) && arg.data === undefined)
            out.set(route, types[arg.index]);
      }
    }
  }
  return out;
}

/** Every string under a `summary` or `description` key anywhere in the document, with where it is. */
function prose(node: unknown, path = '$', out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) node.forEach((v, i) => prose(v, `${path}[${i}]`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if ((k === 'summary' || k === 'description') && typeof v === 'string') out.push([`${path}.${k}`, v]);
      else prose(v, `${path}.${k}`, out);
    }
  }
  return out;
}

describe('the OpenAPI document (/docs-json)', () => {
  // a receiver, for a delivery with an attempt to read
  const t = useService({ receiver: true });
  let doc: { paths: Record<string, Record<string, Operation>>; components: any };
  let operations: [string, Operation][];

  beforeAll(async () => {
    doc = (await t.http.get('/docs-json')).body;
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]),
    );
  });

  it('describes the routes', () => {
    expect(operations.length).toBeGreaterThan(40);
  });

  it('is the document the console types are generated from, built without PostgreSQL or Redis', async () => {
    expect(await previewOpenApiDocument()).toEqual(doc);
  });

  it('gives every operation a summary', () => {
    expect(operations.filter(([, op]) => !op.summary?.trim()).map(([name]) => name)).toEqual([]);
  });

  it('gives every operation a unique, client-friendly operationId (camelCase, no controller names)', () => {
    const bad = operations.filter(
      ([, op]) => !/^[a-z][A-Za-z0-9]*$/.test(op.operationId ?? '') || /Controller/.test(op.operationId ?? ''),
    );
    expect(bad.map(([name, op]) => `${name}: ${op.operationId}`)).toEqual([]);
    const ids = operations.map(([, op]) => op.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('keeps the operationIds clients are generated from', () => {
    const byRoute = Object.fromEntries(operations.map(([name, op]) => [name, op.operationId]));
    expect(byRoute).toMatchObject({
      'POST /portal-api/webhooks': 'createWebhook',
      'PUT /portal-api/webhooks/{id}': 'updateWebhook',
      'GET /portal-api/webhooks/{id}/deliveries': 'listWebhookDeliveries',
      'POST /portal-api/apps': 'createApp',
      'PUT /portal-api/access_requests/{access_request_id}/approve': 'approveAccessRequest',
      'PATCH /gateway/apis/oas/{apiID}': 'patchOasApi',
      'POST /admin/users': 'adminCreateUser',
      'GET /api/apis': 'listApis',
    });
  });

  it('requires user_permissions in the body of POST /api/users, and only there', () => {
    const body = (path: string) => {
      const schema = doc.paths[path].post.requestBody?.content['application/json']?.schema as { $ref: string };
      return doc.components.schemas[schema.$ref.split('/').pop()!];
    };
    const required = ['email_address', 'first_name', 'last_name'];
    expect([...body('/api/users').required].sort()).toEqual([...required, 'user_permissions'].sort());
    expect([...body('/admin/users').required].sort()).toEqual([...required].sort());
  });

  it('documents Idempotency-Key on every write of the portal, dashboard and admin families, and nowhere else', () => {
    const takesKey = (name: string) => /^(POST|PUT|PATCH|DELETE) \/(portal-api|api|admin)\//.test(name);
    const documented = (op: Operation) =>
      (op.parameters ?? []).some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
    expect(operations.filter(([name, op]) => takesKey(name) !== documented(op)).map(([name]) => name)).toEqual([]);
    expect(operations.filter(([name]) => takesKey(name)).length).toBeGreaterThan(15);
    // their answers say when they are a replay
    const unmarked = operations.filter(
      ([name, op]) =>
        takesKey(name) &&
        !Object.entries(op.responses ?? {}).some(
          ([status, r]) => /^2/.test(status) && r.headers?.['Idempotent-Replayed'],
        ),
    );
    expect(unmarked.map(([name]) => name)).toEqual([]);
  });

  it('shows no HTML-like text outside code spans (it would be swallowed by the docs page)', () => {
    const swallowed = prose(doc).filter(([, text]) => /<[A-Za-z!/][^>]*>/.test(text.replace(/`[^`]*`/g, '')));
    expect(swallowed).toEqual([]);
  });

  it('cites no document outside the service', () => {
    const cites = prose(doc).filter(([, text]) => /§|\b(interface|decisions)\s+\d+(\.\d+)?/i.test(text));
    expect(cites).toEqual([]);
  });

  it('describes the dashboard credential as the access keys the service hands out', async () => {
    const { key } = await seedUser(t);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(doc.components.securitySchemes.dashboard).toEqual({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: '32 lower-case hex characters',
      description: 'a dashboard user access key',
    });
  });

  it('types and bounds every documented DTO property as its class-validator rules do', () => {
    const queries = queryDtos(t.app.get(ModulesContainer));
    const wrong: string[] = [];
    let checked = 0;
    for (const [target, rules] of validationRules()) {
      for (const rule of rules) {
        const keywords = RULE_KEYWORDS[rule.name ?? ''];
        const property = String(rule.propertyName);
        if (!keywords || rule.target !== target) continue;
        if (!Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, target.prototype, property)) continue;
        // where the property is shown: its class's schema, and the query parameters of routes taking the class
        const shown: [string, any][] = [];
        const own = doc.components.schemas[target.name]?.properties?.[property];
        if (own) shown.push([`${target.name}.${property}`, own]);
        for (const [route, dto] of queries) {
          if (dto !== target && !(dto?.prototype instanceof target)) continue;
          const [method, path] = route.split(' ');
          const parameter = doc.paths[path]?.[method.toLowerCase()]?.parameters?.find(
            (p) => p.in === 'query' && p.name === property,
          );
          if (parameter) shown.push([`${route} ?${property}`, parameter.schema]);
        }
        if (!shown.length) wrong.push(`${target.name}.${property}: documented, but not found in the document`);
        for (const [where, schema] of shown) {
          const [keyword, value] = Object.entries(keywords((rule.constraints ?? []) as unknown[]))[0];
          // a rule with `each` speaks of the items, as do the value keywords of an array
          const onItems = rule.each || (schema.type === 'array' && !keyword.endsWith('Items'));
          const actual = (onItems ? schema.items : schema)?.[keyword];
          checked++;
          if (actual !== value)
            wrong.push(`${where}: ${rule.name} wants ${keyword} ${value}, the document has ${actual}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('types every parameter of every operation', () => {
    const untyped = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, op]) =>
        (op.parameters ?? [])
          .filter((p) => !p.schema?.type && !p.schema?.$ref)
          .map((p) => `${method.toUpperCase()} ${path} ${p.in} ${p.name}`),
      ),
    );
    expect(untyped).toEqual([]);
  });

  it('lists null among the values of every nullable enum, so strict validators take a null answer', () => {
    const found: string[] = [];
    const visit = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const schema = node as { nullable?: boolean; enum?: unknown[] };
      if (schema.nullable && Array.isArray(schema.enum)) found.push(`${at} ${schema.enum.includes(null)}`);
      for (const [k, v] of Object.entries(node)) visit(v, `${at}.${k}`);
    };
    visit(doc.components.schemas, 'schemas');
    expect(found).toEqual(
      expect.arrayContaining([
        'schemas.WebhookResponse.properties.DisabledReason true',
        'schemas.AttemptResponse.properties.Error true',
      ]),
    );
    expect(found.filter((f) => f.endsWith('false'))).toEqual([]);
  });

  it('admits null for every nullable member, read as OpenAPI 3.0.3 reads nullable (it does not reach into allOf)', () => {
    // ajv's own `nullable`, as strict validators read it; LastFailure ({nullable, allOf: [$ref]}) refused null
    const ajv = new Ajv({ strict: false, validateFormats: false });
    const refusing: string[] = [];
    for (const [name, schema] of Object.entries<any>(doc.components.schemas))
      for (const [member, s] of Object.entries<any>(schema.properties ?? {}))
        if (s.nullable && !ajv.compile({ ...s, components: doc.components })(null)) refusing.push(`${name}.${member}`);
    expect(refusing).toEqual([]);
  });

  it('documents as nullable every body member that takes null as absent (@IsOptional)', async () => {
    const optional = new Set<string>();
    for (const [target, rules] of validationRules())
      for (const rule of rules)
        if (rule.target === target && rule.name === 'isOptional')
          optional.add(`${target.name}.${String(rule.propertyName)}`);
    const wrong: string[] = [];
    let checked = 0;
    for (const [name, schema] of Object.entries<any>(doc.components.schemas))
      for (const [member, s] of Object.entries<any>(schema.properties ?? {})) {
        if (!optional.has(`${name}.${member}`)) continue;
        checked++;
        if (!s.nullable) wrong.push(`${name}.${member}`);
      }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(13);
    // and as the service takes them: a webhook and an administrative user made with every such member null
    const nulls = (schema: string) =>
      Object.fromEntries(
        Object.entries<any>(doc.components.schemas[schema].properties)
          .filter(([, s]) => s.nullable && !s.readOnly)
          .map(([k]) => [k, null]),
      );
    const webhook = await t.portal.post('/portal-api/webhooks', {
      ...nulls('CreateWebhookDto'),
      Name: 'nulls',
      URL: t.sink.url('/nulls'),
      Events: ['AccessRequestApproved'],
    });
    expect(webhook.status).toBe(201);
    expect(webhook.body).toMatchObject({ Method: 'POST', Timeout: 30, Headers: [], SignatureScheme: 'v1' });
    // null is listed on copies of the enums: the arrays the validators hold (WEBHOOK_METHODS) keep refusing it
    expect(doc.components.schemas.WebhookResponse.properties.Method.enum).not.toContain(null);
    const update = await t.portal.put(`/portal-api/webhooks/${webhook.body.ID}`, {
      Method: null,
      SignatureScheme: null,
    });
    expect(update.status).toBe(422);
    expect(update.body.errors).toEqual([
      'Method must be one of POST, PUT, PATCH, GET, DELETE',
      expect.stringContaining('SignatureScheme'),
    ]);
    const user = await t.http
      .with({ 'admin-auth': TEST_SECRETS.ADMIN_SECRET })
      .post('/admin/users', { ...nulls('CreateUserDto'), ...newUser('nulls') });
    expect(user.status).toBe(200);
    expect(user.body.Meta).toMatchObject({
      active: false,
      org_id: '',
      group_id: '',
      api_model: {},
      password_max_days: 0,
      user_permissions: { IsAdmin: 'admin', ResetPassword: 'admin' },
    });
  });

  it('types as integer what the contract calls integer: ids, pages, counts, attempt numbers, durations, statuses', () => {
    const schemas = doc.components.schemas;
    const integers = [
      'CreateUserDto.password_max_days',
      'UserResponseDto.password_max_days',
      'UserListResponseDto.pages',
      'ApiListResponseDto.pages',
      'AnalyticsPageDto.pages',
      'CreateWebhookDto.Timeout',
      'UpdateWebhookDto.Timeout',
      'WebhookResponse.Timeout',
      'CreateWebhookDto.RateLimit',
      'WebhookResponse.RateLimit',
      'AnalyticsRecordDto.hits',
      'AnalyticsRecordDto.success',
      'AnalyticsRecordDto.error',
      ...['day', 'month', 'year', 'hour', 'code'].map((f) => `AnalyticsIdDto.${f}`),
      'AnalyticsIngestRecordDto.code',
      'IngestResponseDto.ingested',
      'AppResponse.ID',
      'AppResponse.UserID',
      'AccessRequestResponse.ID',
      'AccessRequestResponse.AppID',
      'AccessRequestResponse.PlanID',
      'DeliveryResponse.AttemptCount',
      'AttemptResponse.Number',
      'AttemptResponse.StatusCode',
      'AttemptResponse.DurationMs',
      'LastFailureResponse.StatusCode',
      ...['Delivered', 'Failed', 'Pending', 'Retrying', 'Attempts', 'LatencyP50Ms', 'LatencyP95Ms'].map(
        (f) => `WebhookStatsResponse.${f}`,
      ),
      'RecoverResponse.Requeued',
      'RotateSecretDto.GracePeriodSeconds',
    ];
    const typeOf = (name: string) => {
      const [schema, property] = name.split('.');
      return `${name}: ${schemas[schema]?.properties?.[property]?.type}`;
    };
    expect(integers.map(typeOf)).toEqual(integers.map((name) => `${name}: integer`));
    const pageParameters = operations.flatMap(([name, op]) =>
      (op.parameters ?? [])
        .filter((p) => p.in === 'query' && ['p', 'page', 'per_page'].includes(p.name))
        .map((p) => `${name} ?${p.name}: ${p.schema?.type}`),
    );
    expect(pageParameters.length).toBeGreaterThan(6);
    expect(pageParameters.filter((p) => !p.endsWith(': integer'))).toEqual([]);
  });

  it('states the limits the service enforces on dashboard users', () => {
    const user = doc.components.schemas.CreateUserDto.properties;
    expect(user).toMatchObject({
      password_max_days: { type: 'integer', minimum: 0, maximum: 36500 },
      email_address: { maxLength: 254 },
      first_name: { minLength: 1, maxLength: 256 },
      last_name: { minLength: 1, maxLength: 256 },
      org_id: { maxLength: 128 },
      group_id: { maxLength: 128 },
      password: { minLength: 1, maxLength: 1024 },
    });
  });

  it('answers as its schemas say: integers as integers, within the documented bounds', async () => {
    const schemas = new OpenApiSchemas(doc);
    const wrong: string[] = [];
    /** Checks an answer of the route `method path` (as the document names it) against the schema of its status. */
    const check = (method: string, path: string, res: HttpResponse) => {
      const response = doc.paths[path]?.[method]?.responses?.[res.status];
      if (!response) return wrong.push(`${method} ${path}: ${res.status} is not listed: ${res.text.slice(0, 200)}`);
      const schema = response.content?.['application/json']?.schema;
      for (const e of schemas.errors(schema, res.body)) wrong.push(`${method} ${path} ${res.status}: ${e}`);
      return res.body;
    };

    const admin = t.http.with(ADMIN);
    const made = check('post', '/admin/users', await admin.post('/admin/users', { ...newUser('a'), active: true }));
    const dashboard = t.http.with({ authorization: `Bearer ${made.Message}` });
    const user = { ...newUser('b'), password_max_days: 36500, user_permissions: { apis: 'read' } };
    const { ID } = check('post', '/api/users', await dashboard.post('/api/users', user));
    check('get', '/api/users', await dashboard.get('/api/users'));
    check('get', '/api/users/{id}', await dashboard.get(`/api/users/${ID}`));

    await createApi(t, oasDoc({ org: '', categories: ['payments'] }));
    check('get', '/api/apis', await dashboard.get('/api/apis?p=-1'));
    check('get', '/api/apis/groups', await dashboard.get('/api/apis/groups'));
    const hit = { api_id: 'a1', path: '/pets', code: 200, upstream_latency: 1, request_time: 2, oauth_id: 'client-1' };
    const records = [1, 2].map((latency) => ({ ...hit, timestamp: '2024-03-01T10:15:00Z', latency }));
    check('post', '/gateway/analytics', await t.http.post('/gateway/analytics', records, GATEWAY));
    const activity =
      '/api/activity/oauthid/{OAuthClientID}/{startDay}/{startMonth}/{startYear}/{EndDay}/{EndMonth}/{EndYear}';
    const rows = check('get', activity, await dashboard.get('/api/activity/oauthid/client-1/1/3/2024/31/3/2024'));
    expect(rows.data).toEqual([expect.objectContaining({ hits: 2, latency: 1.5 })]);

    const app = check(
      'post',
      '/portal-api/apps',
      await t.portal.post('/portal-api/apps', { Name: 'Typed', UserID: 7 }),
    );
    const body = { AppID: app.ID, Catalogue: 'c', Plan: 'p', Products: ['x'], AuthType: 'authToken', User: 'User#1' };
    const access = { ...body, ProvisionImmediately: true, ProductIDs: [4], PlanID: 2 };
    check('post', '/portal-api/access_requests', await t.portal.post('/portal-api/access_requests', access));
    check('get', '/portal-api/apps/{id}', await t.portal.get(`/portal-api/apps/${app.ID}`));

    const w = await t.webhook({ Timeout: 60, RateLimit: 10 });
    check('get', '/portal-api/webhooks/{id}', await t.portal.get(`/portal-api/webhooks/${w.ID}`));
    const sent = check(
      'post',
      '/portal-api/webhooks/{id}/test',
      await t.portal.post(`/portal-api/webhooks/${w.ID}/test`),
    );
    const delivery = `/portal-api/webhooks/${w.ID}/deliveries/${sent.DeliveryID}`;
    const attempted = await eventually(
      async () => {
        const res = await t.portal.get(delivery);
        return res.body.Attempts?.length ? res : null;
      },
      15_000,
      'an attempt of the test delivery',
    );
    check('get', '/portal-api/webhooks/{id}/deliveries/{deliveryId}', attempted);
    check('get', '/portal-api/webhooks/{id}/deliveries', await t.portal.get(`/portal-api/webhooks/${w.ID}/deliveries`));
    check('get', '/portal-api/webhooks/{id}/stats', await t.portal.get(`/portal-api/webhooks/${w.ID}/stats`));
    expect(wrong).toEqual([]);
  });

  it('allows exactly the user_permissions the service takes', async () => {
    const schemas = new OpenApiSchemas(doc);
    const body = doc.paths['/api/users'].post.requestBody?.content['application/json'].schema;
    // an IsAdmin caller: it may grant anything, so only the shape of user_permissions decides
    const admin = await seedUser(t, { org: '' });
    const samples = [
      {},
      { apis: 'read', users: 'write', analytics: 'deny' },
      { apis: 'admin' },
      { apis: 'none' },
      { IsAdmin: 'admin' },
      { IsAdmin: 'deny', ResetPassword: 'deny' },
      { IsAdmin: 'read' },
      { ResetPassword: 'write' },
      { everything: 'read' },
      { apis: 1 },
      [],
      'read',
    ];
    const wrong: string[] = [];
    for (const user_permissions of samples) {
      const user = { ...newUser('p'), user_permissions };
      const documented = schemas.errors(body, user).length === 0;
      const res = await admin.http.post('/api/users', user);
      if ((res.status === 200) !== documented)
        wrong.push(`${JSON.stringify(user_permissions)}: ${res.status} ${res.text}, documented ${documented}`);
    }
    expect(wrong).toEqual([]);
  });

  it('refuses exactly the names and descriptors the served document calls invalid, on every route taking one', async () => {
    const schemas = new OpenApiSchemas(doc);
    const bodySchema = (path: string) => doc.paths[path].post.requestBody?.content['application/json'].schema;
    const app = (await t.portal.post('/portal-api/apps', { Name: 'Texts' })).body;
    const request = {
      AppID: app.ID,
      Catalogue: 'c',
      Plan: 'p',
      Products: ['x'],
      AuthType: 'authToken',
      User: 'User#1',
    };
    const routes: [string, (text: string) => Record<string, unknown>, (body: unknown) => Promise<HttpResponse>][] = [
      ['/portal-api/apps', (Name) => ({ Name }), (body) => t.portal.post('/portal-api/apps', body)],
      [
        '/portal-api/access_requests',
        (Catalogue) => ({ ...request, Catalogue }),
        (body) => t.portal.post('/portal-api/access_requests', body),
      ],
      [
        '/portal-api/access_requests',
        (p) => ({ ...request, Products: ['x', p] }),
        (body) => t.portal.post('/portal-api/access_requests', body),
      ],
      [
        '/portal-api/webhooks',
        (Name) => ({ Name, URL: 'https://hooks.example.com/', Events: ['AccessRequestApproved'] }),
        (body) => t.portal.post('/portal-api/webhooks', body),
      ],
      [
        '/admin/users',
        (first_name) => ({ ...newUser('texts'), first_name }),
        (body) => t.http.post('/admin/users', body, ADMIN),
      ],
    ];
    const texts = [
      'x',
      'My app',
      '  padded  ',
      'ümlaut',
      '👩\u200d💻',
      'a\u200bb',
      '',
      ' ',
      '\u00a0\u3000',
      '\u200b',
      '\u2800',
    ];
    texts.push('a\nb', 'a\tb', 'a\u0085', 'a\u2028b', 'a,b');
    // lengths at and past the limits, in characters (code points) as the document counts them: ❤️ is two
    texts.push('\u2764\ufe0f'.repeat(127) + 'a', '\u2764\ufe0f'.repeat(128), '\u2764\ufe0f'.repeat(129));
    const wrong: string[] = [];
    for (const [path, bodyOf, send] of routes)
      for (const text of texts) {
        const body = bodyOf(text);
        const documented = schemas.errors(bodySchema(path), body).length === 0;
        const res = await send(body);
        if (documented !== res.status < 300)
          wrong.push(
            `${path} ${JSON.stringify(body)}: ${documented ? 'valid' : 'invalid'} by the document, ${res.status}`,
          );
      }
    expect(wrong).toEqual([]);
  });

  it('states the e-mail addresses the user routes take, beyond what format email promises', async () => {
    const schema = doc.components.schemas.CreateUserDto.properties.email_address;
    const described = (address: string) => schema.description.includes(`\`${address}\``);
    const refused = ['a@b.c', 'a@localhost', 'a@[127.0.0.1]'];
    const taken = ['ümlaut@example.com', '"a b"@example.com'];
    expect([...refused, ...taken].filter((a) => !described(a))).toEqual([]);
    const answers: [string, number][] = [];
    for (const address of [...refused, ...taken]) {
      const res = await t.http.post('/admin/users', { ...newUser('mail'), email_address: address }, ADMIN);
      answers.push([address, res.status]);
    }
    expect(answers).toEqual([...refused.map((a) => [a, 400]), ...taken.map((a) => [a, 200])]);
  });

  it('refuses just past each limit it states for the analytics batch, and takes what is at it', async () => {
    const record = doc.components.schemas.AnalyticsIngestRecordDto;
    const good: Record<string, unknown> = {
      timestamp: '2024-03-01T10:15:00Z',
      api_id: 'a1',
      path: '/pets',
      code: 200,
      latency: 1,
      upstream_latency: 1,
      request_time: 1,
    };
    const cases: [string, unknown, boolean][] = [];
    for (const [name, p] of Object.entries<any>(record.properties)) {
      if (p.maxLength !== undefined)
        cases.push([name, 'a'.repeat(p.maxLength), true], [name, 'a'.repeat(p.maxLength + 1), false]);
      // characters (code points) as the schema counts them; the fields keying the rollup have a bound in bytes too
      if (p.maxLength !== undefined && !['org_id', 'api_id', 'path', 'oauth_id'].includes(name))
        cases.push([name, '😀'.repeat(p.maxLength), true], [name, '😀'.repeat(p.maxLength + 1), false]);
      if (p.minLength !== undefined) cases.push([name, 'a'.repeat(p.minLength - 1), false]);
      if (p.maximum !== undefined) cases.push([name, p.maximum, true], [name, p.maximum + 1, false]);
      if (p.minimum !== undefined) cases.push([name, p.minimum, true], [name, p.minimum - 1, false]);
      if (p.type === 'integer') cases.push([name, 200.5, false]);
    }
    expect(cases.length).toBeGreaterThan(30);
    const wrong: string[] = [];
    for (const [name, value, taken] of cases) {
      const res = await t.http.post('/gateway/analytics', [{ ...good, [name]: value }], GATEWAY);
      if ((res.status === 200) !== taken)
        wrong.push(`${name} ${String(value).slice(0, 20)}: ${res.status} ${res.text}`);
    }
    expect(wrong).toEqual([]);
  });

  it('states the date segments of the analytics route as the route reads them', async () => {
    const admin = await seedUser(t, { org: '' });
    const path =
      '/api/activity/oauthid/{OAuthClientID}/{startDay}/{startMonth}/{startYear}/{EndDay}/{EndMonth}/{EndYear}';
    const parameters = doc.paths[path].get.parameters ?? [];
    const pattern = (name: string) => new RegExp(parameters.find((p) => p.name === name)!.schema.pattern);
    const wrong: string[] = [];
    for (const [day, year] of [
      ['1', '2024'],
      ['01', '2024'],
      ['001', '2024'],
      ['1.0', '2024'],
      ['1', '24'],
      ['1', '02024'],
    ]) {
      const res = await admin.http.get(`/api/activity/oauthid/c/${day}/3/${year}/${day}/3/${year}`);
      const documented = pattern('startDay').test(day) && pattern('EndYear').test(year);
      if ((res.status === 200) !== documented) wrong.push(`${day}/3/${year}: ${res.status}, documented ${documented}`);
    }
    expect(wrong).toEqual([]);
  });

  it('states the since of recover and stats as the RFC 3339 date-time it is read as', async () => {
    const stats = doc.paths['/portal-api/webhooks/{id}/stats'].get.parameters?.find((p) => p.name === 'since');
    expect([doc.components.schemas.RecoverDto.properties.since.format, stats?.schema.format]).toEqual([
      'date-time',
      'date-time',
    ]);
    const w = await t.webhook();
    const wrong: string[] = [];
    // whether each is a date-time as RFC 3339 (the format date-time of a schema) defines one
    for (const [since, dateTime] of [
      ['2026-11-22T10:00:00Z', true],
      ['2026-11-22t10:00:00.5z', true],
      ['2026-11-22 10:00:00-05:30', true],
      ['2026-11-22', false],
      ['2026-11-22T10:00Z', false],
      ['2026-11-22T10:00:00', false],
      ['2026-13-01T00:00:00Z', false],
      ['2026-02-30T00:00:00Z', false],
      ['yesterday', false],
    ] as const) {
      const recovered = await t.portal.post(`/portal-api/webhooks/${w.ID}/recover`, { since });
      const read = await t.portal.get(`/portal-api/webhooks/${w.ID}/stats?since=${encodeURIComponent(since)}`);
      for (const res of [recovered, read])
        if ((res.status === 200) !== dateTime) wrong.push(`${since}: ${res.status}, a date-time: ${dateTime}`);
    }
    expect(wrong).toEqual([]);
  });

  it("states PATCH's listenPath and customDomain as the route reads them", async () => {
    const parameters = doc.paths['/gateway/apis/oas/{apiID}'].patch.parameters ?? [];
    const schema = (name: string) => parameters.find((p) => p.name === name)!.schema;
    // the pattern, and the length in characters (code points) where one is given
    const pattern = (name: string) => ({
      test: (value: string) =>
        new RegExp(schema(name).pattern, 'u').test(value) && [...value].length <= (schema(name).maxLength ?? Infinity),
    });
    const id = await createApi(t, oasDoc({ id: 'patch-parameters' }));
    const body = oasDoc({ id });
    const wrong: string[] = [];
    const cases: [string, string[]][] = [
      ['listenPath', ['/', '/a/', '/ü', '/a%b', '', 'a', '/a b', '/a\u00a0b', '/\ufeff', '/a\u007f']],
      // 1025 characters in 2049 UTF-16 units (within the maxLength), and one character over it
      ['listenPath', [`/${'😀'.repeat(1024)}`, `/${'a'.repeat(2048)}`]],
      ['customDomain', ['', 'api.example.com', '*.example.com:8080', '{sub}.example.com', 'a b', 'ü.example', 'a/b']],
    ];
    for (const [name, values] of cases)
      for (const value of values) {
        const res = await t.http.patch(`/gateway/apis/oas/${id}?${name}=${encodeURIComponent(value)}`, body, GATEWAY);
        const documented = pattern(name).test(value);
        if ((res.status === 200) !== documented)
          wrong.push(`${name}=${JSON.stringify(value)}: ${res.status}, documented ${documented}`);
      }
    expect(wrong).toEqual([]);
  });

  it('states the auth_type list of GET /api/apis as the route reads it', async () => {
    const admin = await seedUser(t, { org: '' });
    const parameter = (doc.paths['/api/apis'].get.parameters ?? []).find((p) => p.name === 'auth_type')!;
    const pattern = new RegExp(parameter.schema.pattern, 'u');
    const wrong: string[] = [];
    const values = ['keyless', 'keyless,authToken', ' keyless , oauth ', '', ',', 'jwt,,basic', '\u00a0jwt\u3000'];
    values.push('Keyless', 'keyless;jwt', 'foo', 'keyless,foo', 'key less', 'keylesskeyless');
    for (const value of values) {
      const res = await admin.http.get(`/api/apis?auth_type=${encodeURIComponent(value)}`);
      if ((res.status === 200) !== pattern.test(value))
        wrong.push(`${JSON.stringify(value)}: ${res.status}, documented ${pattern.test(value)}`);
    }
    expect(wrong).toEqual([]);
  });

  it("states the limits of a webhook's Options as they are refused", async () => {
    const options = doc.components.schemas.CreateWebhookDto.properties.Options;
    const tooMany = 'Options must be an object of at most';
    const withOptions = async (o: Record<string, string>) => {
      const body = {
        Name: 'o',
        Type: 'rabbitmq',
        URL: 'amqp://u:p@127.0.0.1:5672/',
        Events: ['AccessRequestApproved'],
      };
      const res = await t.portal.post('/portal-api/webhooks', { ...body, Options: o });
      return res.status === 422 && res.body.errors.some((e: string) => e.startsWith(tooMany));
    };
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`K${i}`, 'v']));
    expect(await withOptions(many(options.maxProperties))).toBe(false);
    expect(await withOptions(many(options.maxProperties + 1))).toBe(true);
    const long = options.additionalProperties.maxLength;
    expect(await withOptions({ Exchange: 'e'.repeat(long) })).toBe(false);
    expect(await withOptions({ Exchange: 'e'.repeat(long + 1) })).toBe(true);
    // in characters (code points), as a schema's maxLength counts them, however many UTF-16 units they take
    expect(await withOptions({ Exchange: '😀'.repeat(long) })).toBe(false);
    expect(await withOptions({ Exchange: '😀'.repeat(long + 1) })).toBe(true);
  });

  describe('error answers', () => {
    interface FamilyOperation {
      name: string;
      method: string;
      path: string;
      family: FamilyName;
      op: Operation;
    }
    let schemas: OpenApiSchemas;
    let familyOps: FamilyOperation[];
    const credentials = {} as Record<FamilyName, Record<string, string>>;

    beforeAll(async () => {
      schemas = new OpenApiSchemas(doc);
      const admin = await seedUser(t, { org: '' });
      credentials.gateway = GATEWAY;
      credentials.admin = ADMIN;
      credentials.dashboard = { authorization: `Bearer ${admin.key}` };
      credentials.portal = { authorization: TEST_SECRETS.PORTAL_API_TOKEN };
      familyOps = Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => METHODS.includes(method) && familyOfPath(path))
          .map(([method, op]) => ({
            name: `${method.toUpperCase()} ${path}`,
            method: method.toUpperCase(),
            path,
            family: familyOfPath(path)!,
            op,
          })),
      );
    });

    /** The path with every parameter filled in (`1`, or `first` for the first one). */
    const fill = (path: string, first = '1') => {
      let i = 0;
      return path.replace(/\{\w+\}/g, () => (i++ === 0 ? first : '1'));
    };

    /** What is wrong with an answer of `o`: a status it does not list, or a body its schema for that status refuses. */
    function undocumented(o: FamilyOperation, res: HttpResponse): string[] {
      const response = o.op.responses?.[res.status];
      if (!response) return [`${o.name}: answered ${res.status} (${res.text.slice(0, 120)}), which it does not list`];
      const schema = response.content?.['application/json']?.schema;
      if (!schema) return [`${o.name}: lists ${res.status} without a JSON schema`];
      return schemas.errors(schema, res.body).map((e) => `${o.name} ${res.status}: ${res.text.slice(0, 120)}: ${e}`);
    }

    it('lists on every operation its credential failure, validation status, 400, 431 and 500, in its error body', () => {
      const wrong: string[] = [];
      for (const { name, method, path, family, op } of familyOps) {
        const { credential, validation, body } = FAMILIES[family];
        // a malformed request is a 400 in every family, refused before any route's rules apply
        const expected = [credential, validation, '400', '431', '500'];
        // a body is read on every method but GET and HEAD; a path segment is limited where it is a parameter
        if (method !== 'GET') expected.push('413');
        if (path.includes('{')) expected.push('414');
        const listed = Object.keys(op.responses ?? {});
        for (const status of expected) if (!listed.includes(status)) wrong.push(`${name}: ${status} not listed`);
        if (method === 'GET' && listed.includes('413')) wrong.push(`${name}: lists 413, but its body is never read`);
        if (!path.includes('{') && listed.includes('414')) wrong.push(`${name}: lists 414 without a path parameter`);
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const schema = response.content?.['application/json']?.schema;
          if (
            Number(status) >= 400 &&
            JSON.stringify(schema) !== JSON.stringify({ $ref: `#/components/schemas/${body}` })
          )
            wrong.push(`${name}: ${status} is not described as ${body}`);
        }
      }
      expect(wrong).toEqual([]);
      for (const family of Object.keys(FAMILIES)) expect(familyOps.some((o) => o.family === family)).toBe(true);
    });

    it('lists 404 only on operations whose path names a resource that may not exist', () => {
      // a route without a path parameter (a create, a list, a filter test) has nothing to look up and be missing
      const listing = familyOps.filter((o) => !o.path.includes('{') && o.op.responses?.['404']);
      expect(listing.map((o) => o.name)).toEqual([]);
    });

    it('answers every operation without its credential as it lists', async () => {
      const wrong: string[] = [];
      for (const o of familyOps) {
        const res = await t.http.send(o.method, fill(o.path));
        expect([o.name, res.status]).toEqual([o.name, Number(FAMILIES[o.family].credential)]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it('answers every operation a query parameter given twice with the validation status it lists', async () => {
      const wrong: string[] = [];
      for (const o of familyOps) {
        const res = await t.http.send(o.method, `${fill(o.path)}?x=1&x=2`, { headers: credentials[o.family] });
        expect([o.name, res.status]).toEqual([o.name, Number(FAMILIES[o.family].validation)]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it('answers every operation a malformed percent-escape in its path with the 400 it lists', async () => {
      const wrong: string[] = [];
      for (const o of familyOps) {
        const url = o.path.includes('{') ? fill(o.path, '%zz') : `${o.path}%zz`;
        const res = await t.http.send(o.method, url, { headers: credentials[o.family] });
        expect([o.name, res.status]).toEqual([o.name, 400]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it('answers every operation with a path parameter an over-long segment with the 414 it lists', async () => {
      const wrong: string[] = [];
      const withParameter = familyOps.filter((o) => o.path.includes('{'));
      expect(withParameter.length).toBeGreaterThan(20);
      for (const o of withParameter) {
        const res = await t.http.send(o.method, fill(o.path, 'x'.repeat(MAX_SEGMENT + 1)), {
          headers: credentials[o.family],
        });
        expect([o.name, res.status]).toEqual([o.name, 414]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it('answers every operation headers over the limit with the 431 it lists', async () => {
      const wrong: string[] = [];
      for (const o of familyOps) {
        const res = await t.http.send(o.method, fill(o.path), {
          headers: { ...credentials[o.family], 'x-padding': 'a'.repeat(maxHeaderSize) },
        });
        expect([o.name, res.status]).toEqual([o.name, 431]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it('answers the operations outside the families (health, metrics) as they list, in the plain error body', async () => {
      const others = Object.entries(doc.paths).flatMap(([path, item]) =>
        familyOfPath(path) ? [] : Object.keys(item as object).map((method) => ({ path, method: method.toUpperCase() })),
      );
      expect(others.map((o) => o.path)).toEqual(expect.arrayContaining(['/health', '/health/ready', '/metrics']));
      const wrong: string[] = [];
      for (const { path, method } of others) {
        const op = doc.paths[path][method.toLowerCase()];
        for (const [url, headers] of [
          [`${path}?x=1&x=2`, {}],
          [`${path}?x=%00`, {}],
          [path, { 'x-padding': 'a'.repeat(maxHeaderSize) }],
        ] as [string, Record<string, string>][]) {
          const res = await t.http.send(method, url, { headers });
          const schema = op.responses?.[res.status]?.content?.['application/json']?.schema;
          if (!schema) wrong.push(`${method} ${url.slice(0, 40)}: answered ${res.status}, which it does not list`);
          else wrong.push(...schemas.errors(schema, res.body).map((e) => `${method} ${url.slice(0, 40)}: ${e}`));
        }
      }
      expect(wrong).toEqual([]);
    });

    it("answers every operation that reads a body one over the route's limit with the 413 it lists", async () => {
      const wrong: string[] = [];
      const reading = familyOps.filter((o) => o.method !== 'GET');
      expect(reading.length).toBeGreaterThan(20);
      for (const o of reading) {
        const limit = ROUTE_BODY_LIMITS[o.path] ?? DEFAULT_BODY_LIMIT;
        // a JSON string one byte longer than the limit
        const res = await t.http.send(o.method, fill(o.path), {
          headers: credentials[o.family],
          raw: `"${'a'.repeat(limit - 1)}"`,
        });
        expect([o.name, res.status]).toEqual([o.name, 413]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it("lists the routes' own refusals, with the body they are answered in", async () => {
      const nobody = await seedUser(t, { org: 'acme', permissions: {} });
      const existing = oasDoc({ id: 'refusals-existing' });
      await createApi(t, existing);
      const cases: [string, string, string, Record<string, string>, unknown?][] = [
        ['POST', '/gateway/apis/oas', '/gateway/apis/oas', credentials.gateway, existing],
        ['GET', '/api/users', '/api/users?p=0', credentials.dashboard],
        ['GET', '/api/users', '/api/users', { authorization: `Bearer ${nobody.key}` }],
        ['GET', '/api/apis', '/api/apis?sort=size', credentials.dashboard],
        ['GET', '/api/users/{id}', '/api/users/0123456789abcdef01234567', credentials.dashboard],
        ['POST', '/admin/users', '/admin/users', credentials.admin, { email_address: 'x' }],
        ['GET', '/gateway/apis/oas/{apiID}', '/gateway/apis/oas/none', credentials.gateway],
        ['POST', '/gateway/analytics', '/gateway/analytics', credentials.gateway, {}],
        ['GET', '/portal-api/apps', '/portal-api/apps?per_page=101', credentials.portal],
        ['GET', '/portal-api/apps/{id}', '/portal-api/apps/2147483647', credentials.portal],
      ];
      const wrong: string[] = [];
      for (const [method, path, url, headers, body] of cases) {
        const o = familyOps.find((f) => f.method === method && f.path === path)!;
        const res = await t.http.send(method, url, { headers, body });
        expect([o.name, res.status >= 400]).toEqual([o.name, true]);
        wrong.push(...undocumented(o, res));
      }
      expect(wrong).toEqual([]);
    });

    it('describes each 403 the user writes answer, in its words', async () => {
      const writer = await seedUser(t, { org: 'acme', permissions: { users: 'write' } });
      const holder = await seedUser(t, { org: 'acme', permissions: { users: 'write', apis: 'write' } });
      const reader = await seedUser(t, { org: 'acme', permissions: { users: 'read' } });
      const user = { email_address: 'new@example.com', first_name: 'N', last_name: 'U' };
      const answers: [string, string, HttpResponse][] = [
        ['post', '/api/users', await writer.http.post('/api/users', { ...user, user_permissions: { apis: 'read' } })],
        [
          'post',
          '/api/users',
          await writer.http.post('/api/users', { ...user, user_permissions: { IsAdmin: 'admin' } }),
        ],
        ['post', '/api/users', await reader.http.post('/api/users', { ...user, user_permissions: {} })],
        ['delete', '/api/users/{id}', await writer.http.delete(`/api/users/${holder.id}`)],
        ['delete', '/api/users/{id}', await reader.http.delete(`/api/users/${holder.id}`)],
      ];
      for (const [method, path, res] of answers) {
        expect([path, res.status]).toEqual([path, 403]);
        // the message up to what varies: the path, or the areas in parentheses
        const fixed = String(res.body.Message)
          .replace(/\/api\/\S*$/, '')
          .replace(/\(.*\)$/, '(');
        expect(doc.paths[path][method].responses?.['403'].description).toContain(fixed);
      }
    });

    it('lists text/plain where a route takes JSON sent so (the gateway family), and nowhere else', async () => {
      const withBody = familyOps.filter((o) => o.op.requestBody);
      expect(withBody.length).toBeGreaterThan(15);
      const wrong: string[] = [];
      for (const o of withBody) {
        const listed = 'text/plain' in o.op.requestBody!.content;
        const res = await request(`${t.baseUrl}${fill(o.path, 'none')}`, {
          method: o.method,
          headers: { ...credentials[o.family], 'content-type': 'text/plain' },
          body: '{}',
        });
        // a family that takes JSON only refuses the media type in its validation status, before reading the body
        const refused = (await res.body.text()).includes('the body must be JSON');
        if (listed === refused) wrong.push(`${o.name}: lists text/plain ${listed}, answered ${res.statusCode}`);
      }
      expect(wrong).toEqual([]);
      expect(
        withBody
          .filter((o) => 'text/plain' in o.op.requestBody!.content)
          .map((o) => o.name)
          .sort(),
      ).toEqual([
        'PATCH /gateway/apis/oas/{apiID}',
        'POST /gateway/analytics',
        'POST /gateway/apis/oas',
        'PUT /gateway/apis/oas/{apiID}',
      ]);
    });

    it('never reads the body of a GET, so answers none 413', async () => {
      const res = await request(`${t.baseUrl}/portal-api/apps`, {
        method: 'GET',
        headers: { ...credentials.portal, 'content-type': 'application/json' },
        body: `"${'a'.repeat(DEFAULT_BODY_LIMIT)}"`,
      });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
    });
  });
});
