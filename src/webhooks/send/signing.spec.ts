import { createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { newSigningKey, signatureHeaders, verificationKey } from './signing';

/** Verifies a v1a signature the way a receiver does: node:crypto and the published `whpk_` key only. */
function verifiesEd25519(publicKey: string, headers: Record<string, string>, body: string): boolean {
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const content = Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`);
  return headers['webhook-signature']
    .split(' ')
    .filter((s) => s.startsWith('v1a,'))
    .some((s) => verify(null, content, key, Buffer.from(s.slice(4), 'base64')));
}

describe('Standard Webhooks signing', () => {
  const body = JSON.stringify({
    Event: 'AccessRequestApproved',
    Message: { ID: 1 },
    Timestamp: new Date().toISOString(),
  });

  it('produces v1 headers the standardwebhooks and svix receiver libraries verify', () => {
    const key = newSigningKey('v1');
    expect(key.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const headers = signatureHeaders([key], 'd2f1a3c4-delivery', body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(key.secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new SvixWebhook(key.secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('fails verification for a changed body or another secret', () => {
    const key = newSigningKey('v1');
    const headers = signatureHeaders([key], 'id-1', '{"a":1}');
    expect(() => new Webhook(key.secret).verify('{"a":2}', headers)).toThrow();
    expect(() => new Webhook(newSigningKey('v1').secret).verify('{"a":1}', headers)).toThrow();
  });

  it('signs an empty body for GET and DELETE deliveries', () => {
    const key = newSigningKey('v1');
    const headers = signatureHeaders([key], 'id-2', '');
    expect(() => new Webhook(key.secret).verify('', headers)).not.toThrow();
  });

  it('signs v1a with Ed25519: the published whpk_ key verifies it, another key or body does not', () => {
    const key = newSigningKey('v1a');
    expect(key.secret).toMatch(/^whsk_/);
    const publicKey = verificationKey(key);
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(verificationKey(key)).toBe(publicKey);
    const headers = signatureHeaders([key], 'id-3', body);
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(verifiesEd25519(publicKey, headers, body)).toBe(true);
    expect(verifiesEd25519(publicKey, headers, body + ' ')).toBe(false);
    expect(verifiesEd25519(verificationKey(newSigningKey('v1a')), headers, body)).toBe(false);
  });

  it('lists one signature per key, space-separated, and each key alone verifies the request', () => {
    const current = newSigningKey('v1');
    const previous = newSigningKey('v1');
    const headers = signatureHeaders([current, previous], 'id-4', body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const k of [current, previous]) {
      expect(new Webhook(k.secret).verify(body, headers)).toEqual(JSON.parse(body));
      expect(new SvixWebhook(k.secret).verify(body, headers)).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(newSigningKey('v1').secret).verify(body, headers)).toThrow();
  });

  it('mixes schemes while a webhook switches from v1 to v1a: both receivers verify', () => {
    const current = newSigningKey('v1a');
    const previous = newSigningKey('v1');
    const headers = signatureHeaders([current, previous], 'id-5', body);
    expect(headers['webhook-signature']).toMatch(/^v1a,\S+ v1,\S+$/);
    expect(verifiesEd25519(verificationKey(current), headers, body)).toBe(true);
    expect(new Webhook(previous.secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('refuses to send unsigned', () => {
    expect(() => signatureHeaders([], 'id-6', body)).toThrow();
  });
});
