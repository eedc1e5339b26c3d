import { HttpClient } from './http-client';
import { TestApp } from './test-app';
import { TEST_SECRETS } from './test-env';

export const EXT = 'x-gateway-api-gateway';
export const ADMIN = { 'admin-auth': TEST_SECRETS.ADMIN_SECRET };
export const GATEWAY = { 'x-gateway-authorization': TEST_SECRETS.GATEWAY_SECRET };
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

let seq = 0;

export interface SeededUser {
  id: string;
  key: string;
  http: HttpClient;
}

/** Creates a user through POST /admin/users (the bootstrap route) and returns its id and access key. */
export async function seedUser(
  t: TestApp,
  opts: { org?: string; permissions?: Record<string, string>; active?: boolean; email?: string } = {},
): Promise<SeededUser> {
  const res = await t.http.post(
    '/admin/users',
    {
      email_address: opts.email ?? `user${++seq}-${Date.now()}@example.com`,
      first_name: 'Test',
      last_name: 'User',
      org_id: opts.org ?? 'org1',
      active: opts.active ?? true,
      ...(opts.permissions ? { user_permissions: opts.permissions } : {}),
    },
    ADMIN,
  );
  if (res.status !== 200) throw new Error(`seedUser: ${res.status} ${res.text}`);
  return { id: res.body.ID, key: res.body.Message, http: t.http.with(bearer(res.body.Message)) };
}

/** A valid OpenAPI 3 document with the gateway extension. */
export function oasDoc(
  opts: {
    id?: string;
    name?: string;
    org?: string;
    categories?: string[];
    security?: Record<string, string[]>[];
    schemes?: Record<string, unknown>;
    ext?: Record<string, unknown>;
    servers?: { url: string }[];
    paths?: Record<string, unknown>;
  } = {},
): Record<string, any> {
  const info: Record<string, unknown> = { name: opts.name ?? 'Pets', state: { active: true } };
  if (opts.id !== undefined) info.id = opts.id;
  if (opts.org !== undefined) info.orgId = opts.org;
  if (opts.categories) info.categories = opts.categories;
  return {
    openapi: '3.0.3',
    info: { title: opts.name ?? 'Pets', version: '1.0.0' },
    ...(opts.servers ? { servers: opts.servers } : {}),
    paths: opts.paths ?? {
      '/pets': {
        get: { operationId: 'listPets', responses: { '200': { description: 'the pets' } } },
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object' } } } },
          responses: { '201': { description: 'created' } },
        },
      },
    },
    ...(opts.schemes ? { components: { securitySchemes: opts.schemes } } : {}),
    ...(opts.security ? { security: opts.security } : {}),
    [EXT]: {
      upstream: { url: 'http://upstream.example/pets' },
      server: { listenPath: { value: '/pets/', strip: true } },
      ...opts.ext,
      // members of opts.ext.info add to (or override) the generated info
      info: { ...info, ...(opts.ext?.info as Record<string, unknown> | undefined) },
    },
  };
}

/** Creates an API definition through the gateway route; returns its id. */
export async function createApi(t: TestApp, doc: Record<string, unknown>): Promise<string> {
  const res = await t.http.post('/gateway/apis/oas', doc, GATEWAY);
  if (res.status !== 200) throw new Error(`createApi: ${res.status} ${res.text}`);
  return res.body.key;
}
