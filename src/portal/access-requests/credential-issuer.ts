import { Injectable, Logger } from '@nestjs/common';
import { randomHex, SecretBox, sha256Hex } from '../../common/crypto/secret-box';
import { AppEntity } from '../apps/app.entity';
import { splitRedirectUrls } from '../apps/dto/redirect-urls.validator';
import { AccessRequestEntity } from './access-request.entity';
import { CredentialEntity } from './credential.entity';
import { Unsealer } from './access-request.mapper';
import { DcrClient, DcrRegistrationRequest, deleteRegistration } from './dcr.client';

export const TOKEN_ENDPOINT_AUTH_METHOD = 'client_secret_basic';

/**
 * The OAuth client an oauth2.0 access request gets (RFC 7591 metadata): the app's redirect addresses,
 * the authorization-code flow when it has any, client credentials always; one scope per requested product.
 */
export function oauthClientMetadata(
  ar: Pick<AccessRequestEntity, 'products'>,
  app: Pick<AppEntity, 'name' | 'redirectUrls'>,
): DcrRegistrationRequest {
  const redirects = splitRedirectUrls(app.redirectUrls);
  return {
    client_name: app.name,
    redirect_uris: redirects,
    grant_types: redirects.length > 0 ? ['authorization_code', 'client_credentials'] : ['client_credentials'],
    response_types: redirects.length > 0 ? ['code'] : [],
    scope: ar.products.join(' '),
    token_endpoint_auth_method: TOKEN_ENDPOINT_AUTH_METHOD,
  };
}

/** A credential's column values, made before anything is written; the access request's id is added on insert. */
export type CredentialDraft = Omit<CredentialEntity, 'id' | 'accessRequestId'>;

/** Makes the credential of an approved access request. */
@Injectable()
export class CredentialIssuer {
  private readonly logger = new Logger(CredentialIssuer.name);
  /** The plain values of the secrets each draft made here has sealed, by their sealed form (see unsealer). */
  private readonly sealed = new WeakMap<CredentialDraft, Map<string, string>>();

  constructor(
    private readonly box: SecretBox,
    private readonly dcr: DcrClient,
  ) {}

  /**
   * authToken: a random key (sealed) and its SHA-256. oauth2.0: a client id and sealed secret, made here or,
   * with DCREnabled, registered at the identity provider (its failure throws). Callers call it before they
   * open a transaction, so no row lock or pooled connection waits on the provider; a draft that is then not
   * committed goes back through withdraw().
   */
  async prepare(
    ar: Pick<AccessRequestEntity, 'authType' | 'dcrEnabled' | 'products'>,
    app: AppEntity,
  ): Promise<CredentialDraft> {
    const credential: CredentialDraft = {
      credentialEncrypted: null,
      credentialHash: null,
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
      createdAt: new Date(),
      revokedAt: null,
    };
    const opened = new Map<string, string>();
    this.sealed.set(credential, opened);
    const seal = (plain: string | null | undefined): string | null => {
      const sealed = this.box.encryptNullable(plain);
      if (sealed !== null) opened.set(sealed, plain!);
      return sealed;
    };
    if (ar.authType === 'authToken') {
      const key = randomHex(32);
      credential.credentialEncrypted = seal(key);
      credential.credentialHash = sha256Hex(key);
    } else {
      const metadata = oauthClientMetadata(ar, app);
      credential.redirectUri = app.redirectUrls;
      credential.scope = metadata.scope;
      credential.responseType = metadata.response_types.join(' ');
      credential.tokenEndpoints = metadata.token_endpoint_auth_method;
      if (ar.dcrEnabled) {
        const reg = await this.dcr.register(metadata);
        const body = reg.body;
        credential.oauthClientId = reg.clientId;
        credential.oauthClientSecretEncrypted = seal(reg.clientSecret);
        credential.dcrResponseEncrypted = this.box.encrypt(reg.raw);
        opened.set(credential.dcrResponseEncrypted, reg.raw);
        credential.dcrRegistrationAccessTokenEncrypted = seal(reg.registrationAccessToken);
        credential.dcrRegistrationClientUri = reg.registrationClientUri;
        credential.expiresAt = reg.clientSecretExpiresAt > 0 ? new Date(reg.clientSecretExpiresAt * 1000) : null;
        if (typeof body.scope === 'string') credential.scope = body.scope;
        if (Array.isArray(body.response_types))
          credential.responseType = body.response_types.filter((v) => typeof v === 'string').join(' ');
        if (typeof body.token_endpoint_auth_method === 'string')
          credential.tokenEndpoints = body.token_endpoint_auth_method;
      } else {
        credential.oauthClientId = randomHex(16);
        credential.oauthClientSecretEncrypted = seal(randomHex(32));
      }
    }
    return credential;
  }

  /**
   * Opens the sealed values of `draft` (made by prepare) without decrypting what was sealed a moment ago (the answer
   * that issues a credential shows its secrets once); anything else through the SecretBox.
   */
  unsealer(draft: CredentialDraft): Unsealer {
    const opened = this.sealed.get(draft);
    return {
      decryptNullable: (sealed) => (sealed && opened?.get(sealed)) ?? this.box.decryptNullable(sealed),
    };
  }

  /**
   * Undoes the provider side of a draft that was not committed: a dynamically registered client is deleted
   * again (RFC 7592, with its registration access token), so the provider keeps no client that nobody holds
   * the secret of. Best effort and never throws: the caller is already answering with another outcome.
   * Logged by client id only (never the token or the secret).
   */
  async withdraw(draft: CredentialDraft, why: string): Promise<void> {
    if (!draft.dcrResponseEncrypted) return;
    const outcome = await deleteRegistration(
      {
        registrationClientUri: draft.dcrRegistrationClientUri,
        registrationAccessToken: this.box.decryptNullable(draft.dcrRegistrationAccessTokenEncrypted),
      },
      this.dcr.timeoutMs,
    );
    if (outcome.deleted)
      this.logger.log({ clientId: draft.oauthClientId, why }, 'dynamic client registration withdrawn');
    else
      this.logger.warn(
        { clientId: draft.oauthClientId, why, reason: outcome.reason },
        'dynamic client registration could not be withdrawn; delete the client at the identity provider',
      );
  }
}
