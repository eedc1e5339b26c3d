import { previewOpenApiDocument } from '../src/bootstrap';
import { useService } from './helpers/use-service';

type Operation = {
  operationId?: string;
  summary?: string;
  parameters?: { name: string; in: string }[];
  responses?: Record<string, { headers?: Record<string, unknown> }>;
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

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
  const t = useService();
  let doc: { paths: Record<string, Record<string, Operation>> };
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
      'PUT /portal-api/access_requests/{id}/approve': 'approveAccessRequest',
      'PATCH /gateway/apis/oas/{apiID}': 'patchOasApi',
      'POST /admin/users': 'adminCreateUser',
      'GET /api/apis': 'listApis',
    });
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
});
