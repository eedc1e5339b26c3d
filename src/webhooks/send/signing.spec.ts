import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signatureHeaders } from './signing';

describe('Standard Webhooks signing', () => {
  it('produces headers the standardwebhooks receiver library verifies', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ Event: 'AccessRequestApproved', Message: { ID: 1 }, Timestamp: new Date().toISOString() });
    const headers = signatureHeaders(secret, 'd2f1a3c4-delivery', body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('fails verification for a changed body or another secret', () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders(secret, 'id-1', '{"a":1}');
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow();
    expect(() => new Webhook(newSigningSecret()).verify('{"a":1}', headers)).toThrow();
  });

  it('signs an empty body for GET and DELETE deliveries', () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders(secret, 'id-2', '');
    expect(() => new Webhook(secret).verify('', headers)).not.toThrow();
  });
});
