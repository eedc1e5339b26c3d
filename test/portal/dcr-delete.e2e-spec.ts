import { AppConfig } from '../../src/config';
import { DcrClient, deleteRegistration } from '../../src/portal/access-requests/dcr.client';
import { FakeIdp } from '../helpers/fake-idp';

const METADATA = {
  client_name: 'App',
  redirect_uris: ['https://app.example/cb'],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  scope: 'a b',
  token_endpoint_auth_method: 'client_secret_basic',
};

/** RFC 7592 deletion of a registration, against the fake provider on 127.0.0.1. */
describe('deleting a dynamic client registration (RFC 7592)', () => {
  let idp: FakeIdp;
  let client: DcrClient;

  beforeAll(async () => {
    idp = await FakeIdp.start();
    client = new DcrClient({ dcr: { registrationEndpoint: idp.url, initialAccessToken: '' } } as unknown as AppConfig);
  });
  afterAll(() => idp.close());
  beforeEach(() => {
    idp.mode = 'ok';
  });

  it('deletes the client at its registration_client_uri with its registration access token', async () => {
    const reg = await client.register(METADATA);
    expect(idp.has(reg.clientId)).toBe(true);
    await expect(deleteRegistration(reg)).resolves.toEqual({ deleted: true });
    expect(idp.has(reg.clientId)).toBe(false);
    expect(idp.deletions.at(-1)).toEqual({ clientId: reg.clientId, authorized: true });
  });

  it('reports, without throwing, a refusal (a wrong token, a client already gone)', async () => {
    const reg = await client.register(METADATA);
    await expect(deleteRegistration({ ...reg, registrationAccessToken: 'not-the-token' })).resolves.toEqual({
      deleted: false,
      reason: 'the identity provider answered HTTP 401',
    });
    expect(idp.has(reg.clientId)).toBe(true);
    await expect(deleteRegistration(reg)).resolves.toEqual({ deleted: true });
    await expect(deleteRegistration(reg)).resolves.toEqual({
      deleted: false,
      reason: 'the identity provider answered HTTP 401',
    });
  });

  it('reports a provider that does not answer in time, or a registration it cannot be asked about', async () => {
    const reg = await client.register(METADATA);
    idp.mode = 'hang';
    await expect(deleteRegistration(reg, 300)).resolves.toEqual({
      deleted: false,
      reason: 'the identity provider did not answer within 300 ms',
    });
    await expect(
      deleteRegistration({ registrationClientUri: '', registrationAccessToken: 'x' }),
    ).resolves.toMatchObject({ deleted: false });
  });
});
