import { AppEntity } from '../apps/app.entity';
import { AccessRequestEntity } from './access-request.entity';
import { oauthClientMetadata } from './credential-issuer';
import { parseRegistration } from './dcr.client';

const ar = Object.assign(new AccessRequestEntity(), { products: ['weather-api', 'maps-api'] });

describe('OAuth client metadata (RFC 7591)', () => {
  it('uses the authorization-code flow with the app redirect addresses when it has any', () => {
    const app = Object.assign(new AppEntity(), {
      name: 'Weather app',
      redirectUrls: 'https://a.example/cb, https://b.example/cb',
    });
    expect(oauthClientMetadata(ar, app)).toEqual({
      client_name: 'Weather app',
      redirect_uris: ['https://a.example/cb', 'https://b.example/cb'],
      grant_types: ['authorization_code', 'client_credentials'],
      response_types: ['code'],
      scope: 'weather-api maps-api',
      token_endpoint_auth_method: 'client_secret_basic',
    });
  });

  it('asks for client credentials only when the app has no redirect address', () => {
    const app = Object.assign(new AppEntity(), { name: 'CLI', redirectUrls: '' });
    expect(oauthClientMetadata(ar, app)).toMatchObject({
      redirect_uris: [],
      grant_types: ['client_credentials'],
      response_types: [],
    });
  });
});

describe('registration replies', () => {
  it('keeps the reply as received and reads its members', () => {
    const raw =
      '{"client_id":"c1","client_secret":"s1","registration_access_token":"t1","registration_client_uri":"https://idp/c1","client_secret_expires_at":1700000000}';
    expect(parseRegistration(raw)).toMatchObject({
      clientId: 'c1',
      clientSecret: 's1',
      registrationAccessToken: 't1',
      registrationClientUri: 'https://idp/c1',
      clientSecretExpiresAt: 1700000000,
      raw,
    });
  });

  it.each([
    ['not json'],
    ['[1]'],
    ['{"client_secret":"s"}'],
    ['{"client_id":""}'],
    ['{"client_id":"c\\u0000"}'],
    ['{"client_id":"c","scope":"\\ud800"}'],
    ['{"client_id":"c","response_types":["code\\u0000"]}'],
    ['{"client_id":"c","client_secret_expires_at":1e20}'],
    ['{"client_id":"c","client_secret_expires_at":1e400}'],
  ])('refuses %s with a 502', (raw) => {
    expect(() => parseRegistration(raw)).toThrow(expect.objectContaining({ status: 502 }));
  });

  it('takes an expiry up to 9999-12-31 23:59:59 UTC, and 0 or a negative one as never', () => {
    expect(parseRegistration('{"client_id":"c","client_secret_expires_at":253402300799}').clientSecretExpiresAt).toBe(
      253402300799,
    );
    expect(parseRegistration('{"client_id":"c","client_secret_expires_at":-1}').clientSecretExpiresAt).toBe(-1);
  });
});
