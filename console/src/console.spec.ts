import { reasons } from './api';
import { match } from './router';

// Pure parts of the console, run by jest with the service's specs (the screens are driven in a real
// browser by test/console/console.e2e-spec.ts).

describe('console routes', () => {
  it('matches a pattern and decodes its parts', () => {
    expect(match('/webhooks/:id', '/webhooks/abc')).toEqual({ id: 'abc' });
    expect(match('/webhooks/:id/deliveries/:deliveryId', '/webhooks/a%2Fb/deliveries/d1')).toEqual({
      id: 'a/b',
      deliveryId: 'd1',
    });
    expect(match('/webhooks', '/webhooks?page=2')).toEqual({});
  });

  it('refuses other shapes and empty parts', () => {
    expect(match('/webhooks/:id', '/webhooks')).toBeNull();
    expect(match('/webhooks/:id', '/webhooks/')).toBeNull();
    expect(match('/webhooks/:id', '/apps/1')).toBeNull();
    expect(match('/webhooks/new', '/webhooks/1')).toBeNull();
  });
});

describe('console error wording', () => {
  it("shows each family's error body in its own words", () => {
    expect(
      reasons(422, { status: 'error', errors: ['Name is required', 'URL must be an absolute http(s) URL'] }),
    ).toEqual(['Name is required', 'URL must be an absolute http(s) URL']);
    expect(reasons(401, { Status: 'Error', Message: 'Not authorised', Meta: null })).toEqual(['Not authorised']);
    expect(
      reasons(403, { status: 'error', message: 'Attempted administrative access with invalid or missing key!' }),
    ).toEqual(['Attempted administrative access with invalid or missing key!']);
  });

  it('falls back to the status when the body says nothing', () => {
    expect(reasons(502, undefined)).toEqual(['the service answered 502']);
    expect(reasons(500, { status: 'error', errors: [] })).toEqual(['the service answered 500']);
  });
});

describe('the console event catalogue', () => {
  // the catalogue comes from the service's OpenAPI document, and the operational subset is the console's own copy:
  // both must say what the service accepts, in its order
  it('lists exactly the events the service accepts, and the same operational events', async () => {
    const service = await import('../../src/events/event-names');
    const { WEBHOOK_EVENTS, OPERATIONAL_EVENTS } = await import('./types');
    expect([...WEBHOOK_EVENTS]).toEqual([...service.WEBHOOK_EVENTS]);
    expect([...OPERATIONAL_EVENTS]).toEqual([...service.OPERATIONAL_EVENTS]);
  });
});
