import { SecretBox } from '../../common/crypto/secret-box';
import { AppConfig } from '../../config';
import { AppEntity } from '../apps/app.entity';
import {
  accessRequestMessage,
  accessRequestResponse,
  credentialMessage,
  credentialResponse,
  nestAccessRequests,
  nestedAccessRequestResponse,
} from './access-request.mapper';
import { AccessRequestEntity } from './access-request.entity';
import { CredentialEntity } from './credential.entity';

const box = new SecretBox({ secrets: { encryptionKey: Buffer.alloc(32, 7) } } as AppConfig);

const app = Object.assign(new AppEntity(), {
  id: 3,
  name: 'Weather app',
  description: '',
  redirectUrls: 'https://a.example/cb',
  userId: 9,
  visibility: 'team',
  createdAt: new Date('2025-01-02T03:04:59Z'),
  updatedAt: new Date('2025-01-02T03:04:59Z'),
});
const ar = Object.assign(new AccessRequestEntity(), {
  id: 12,
  appId: 3,
  catalogue: 'Public',
  plan: 'Free',
  products: ['weather-api', 'maps-api'],
  productIds: [41, 42],
  planId: 5,
  authType: 'authToken',
  dcrEnabled: false,
  provisionImmediately: false,
  user: 'User#1',
  status: 'approved',
  createdAt: new Date('2025-01-02T03:04:00Z'),
  updatedAt: new Date('2025-12-31T23:59:30Z'),
});
const credential = (over: Partial<CredentialEntity> = {}) =>
  Object.assign(new CredentialEntity(), {
    id: 1,
    accessRequestId: 12,
    credentialEncrypted: box.encrypt('the-key'),
    credentialHash: 'h'.repeat(64),
    oauthClientId: '',
    oauthClientSecretEncrypted: null,
    redirectUri: '',
    scope: '',
    responseType: '',
    tokenEndpoints: '',
    dcrResponseEncrypted: null,
    dcrRegistrationAccessTokenEncrypted: null,
    dcrRegistrationClientUri: '',
    expiresAt: null,
    createdAt: new Date('2025-12-31T23:59:30Z'),
    revokedAt: null,
    ...over,
  });

describe('access request mapping', () => {
  it('nests access requests as [] or one inner array holding all of them', () => {
    expect(nestAccessRequests([])).toEqual([]);
    expect(nestAccessRequests([1, 2, 3])).toEqual([[1, 2, 3]]);
  });

  it('shows Products as one string on the access-request routes and as an array inside an app', () => {
    expect(accessRequestResponse(ar, app, [], box).Products).toBe('weather-api, maps-api');
    expect(nestedAccessRequestResponse(ar, app, [], box).Products).toEqual(['weather-api', 'maps-api']);
  });

  it('maps every field, the app name as Client, times as YYYY-MM-DD HH:MM UTC, unset times as 1970-01-01 00:00', () => {
    expect(accessRequestResponse(ar, app, [credential()], box)).toEqual({
      ID: 12,
      AppID: 3,
      Catalogue: 'Public',
      Client: 'Weather app',
      Plan: 'Free',
      User: 'User#1',
      AuthType: 'authToken',
      DCREnabled: false,
      ProvisionImmediately: false,
      Status: 'approved',
      Products: 'weather-api, maps-api',
      ProductIDs: [41, 42],
      PlanID: 5,
      Credentials: [
        {
          AccessRequest: 'AccessRequest#12',
          Credential: 'the-key',
          CredentialHash: 'h'.repeat(64),
          DCRRegistrationAccessToken: '',
          DCRRegistrationClientURI: '',
          DCRResponse: '',
          Expires: '1970-01-01 00:00',
          OAuthClientID: '',
          OAuthClientSecret: '',
          RedirectURI: '',
          ResponseType: '',
          Scope: '',
          TokenEndpoints: '',
        },
      ],
      CreatedAt: '2025-01-02 03:04',
      UpdatedAt: '2025-12-31 23:59',
      DeletedAt: '1970-01-01 00:00',
    });
    expect(nestedAccessRequestResponse(ar, app, [], box)).toMatchObject({
      ProductIDs: [41, 42],
      PlanID: 5,
      DeletedAt: '1970-01-01 00:00',
    });
  });

  it('hides revoked credentials', () => {
    expect(accessRequestResponse(ar, app, [credential({ revokedAt: new Date() })], box).Credentials).toEqual([]);
  });

  it('opens sealed OAuth and DCR secrets and formats Expires', () => {
    const c = credentialResponse(
      credential({
        credentialEncrypted: null,
        credentialHash: null,
        oauthClientId: 'cid',
        oauthClientSecretEncrypted: box.encrypt('csecret'),
        dcrResponseEncrypted: box.encrypt('{"client_id":"cid"}'),
        dcrRegistrationAccessTokenEncrypted: box.encrypt('rat'),
        dcrRegistrationClientUri: 'https://idp/cid',
        expiresAt: new Date('2026-05-06T07:08:09Z'),
      }),
      box,
    );
    expect(c).toMatchObject({
      Credential: '',
      CredentialHash: '',
      OAuthClientID: 'cid',
      OAuthClientSecret: 'csecret',
      DCRResponse: '{"client_id":"cid"}',
      DCRRegistrationAccessToken: 'rat',
      Expires: '2026-05-06 07:08',
    });
  });

  it("builds event Messages with the app's UserID as ByUser, RFC 3339 times and no secrets", () => {
    const message = accessRequestMessage(ar, app);
    expect(message).toEqual({
      ID: 12,
      AppID: 3,
      ByUser: 9,
      Status: 'approved',
      ProductIDs: [41, 42],
      PlanID: 5,
      CreatedAt: '2025-01-02T03:04:00.000Z',
      UpdatedAt: '2025-12-31T23:59:30.000Z',
      UserID: 9,
      Catalogue: 'Public',
      Client: 'Weather app',
      Plan: 'Free',
      Products: ['weather-api', 'maps-api'],
      AuthType: 'authToken',
    });
    // the product's documented keys come first, in its order
    expect(Object.keys(message).slice(0, 8)).toEqual([
      'ID',
      'AppID',
      'ByUser',
      'Status',
      'ProductIDs',
      'PlanID',
      'CreatedAt',
      'UpdatedAt',
    ]);
    const credentialEvent = credentialMessage(credential({ id: 77, oauthClientId: 'cid' }), ar, app);
    expect(credentialEvent).toEqual({
      ID: 77,
      ByUser: 9,
      AccessRequestID: 12,
      AppID: 3,
      CreatedAt: '2025-12-31T23:59:30.000Z',
      UserID: 9,
      AuthType: 'authToken',
      OAuthClientID: 'cid',
    });
    expect(JSON.stringify(credentialEvent)).not.toContain('the-key');
  });

  it('copies ProductIDs so later changes to the row do not reach a built Message', () => {
    const row = Object.assign(new AccessRequestEntity(), { ...ar, productIds: [1] });
    const message = accessRequestMessage(row, app);
    row.productIds.push(2);
    expect(message.ProductIDs).toEqual([1]);
  });
});
