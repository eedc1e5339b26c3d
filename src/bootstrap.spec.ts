import { readFileSync } from 'node:fs';
import { OpenAPIObject } from '@nestjs/swagger';
import { OUTPUT, renderApiTypes } from '../scripts/generate-api-types';
import { previewOpenApiDocument } from './bootstrap';

describe('the OpenAPI document built without PostgreSQL or Redis', () => {
  // built once (it makes the whole application in Nest's preview mode); neither test changes it
  let document: OpenAPIObject;
  beforeAll(async () => {
    document = await previewOpenApiDocument();
  });

  it('documents the routes, with schemas for what the console reads and sends', () => {
    const webhooks = document.paths['/portal-api/webhooks'];
    expect(webhooks.get?.responses['200']).toMatchObject({
      content: { 'application/json': { schema: { items: { $ref: '#/components/schemas/WebhookResponse' } } } },
    });
    expect(webhooks.post?.requestBody).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateWebhookDto' } } },
    });
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/portal-api/apps', '/portal-api/access_requests']),
    );
  });

  it("is what the console's committed API types were generated from", async () => {
    const fresh = await renderApiTypes(document);
    const committed = readFileSync(OUTPUT, 'utf8');
    if (committed !== fresh) {
      throw new Error(
        `${OUTPUT} is stale: the service's OpenAPI document changed. Run \`npm run generate\` and commit it.`,
      );
    }
  });
});
