import { portalTime, rfc3339, UNSET_PORTAL_TIME } from '../../common/http/time';
import { AppEntity } from '../apps/app.entity';
import { AccessRequestEntity } from './access-request.entity';
import { CredentialEntity } from './credential.entity';
import { AccessRequestResponse, NestedAccessRequestResponse } from './dto/access-request-response.dto';
import { CredentialResponse } from './dto/credential-response.dto';
import { AccessRequestEventMessage, CredentialRegisteredMessage, MessageOf } from '../../events/event-messages';

/** What the mapping needs to open sealed columns (SecretBox). */
export interface Unsealer {
  decryptNullable(sealed: string | null | undefined): string;
}

export function credentialResponse(c: CredentialEntity, box: Unsealer): CredentialResponse {
  return {
    AccessRequest: `AccessRequest#${c.accessRequestId}`,
    Credential: box.decryptNullable(c.credentialEncrypted),
    CredentialHash: c.credentialHash ?? '',
    DCRRegistrationAccessToken: box.decryptNullable(c.dcrRegistrationAccessTokenEncrypted),
    DCRRegistrationClientURI: c.dcrRegistrationClientUri,
    DCRResponse: box.decryptNullable(c.dcrResponseEncrypted),
    Expires: portalTime(c.expiresAt),
    OAuthClientID: c.oauthClientId,
    OAuthClientSecret: box.decryptNullable(c.oauthClientSecretEncrypted),
    RedirectURI: c.redirectUri,
    ResponseType: c.responseType,
    Scope: c.scope,
    TokenEndpoints: c.tokenEndpoints,
  };
}

function fields(ar: AccessRequestEntity, app: AppEntity, credentials: CredentialEntity[], box: Unsealer) {
  return {
    ID: ar.id,
    AppID: ar.appId,
    Catalogue: ar.catalogue,
    Client: app.name,
    Plan: ar.plan,
    User: ar.user,
    AuthType: ar.authType,
    DCREnabled: ar.dcrEnabled,
    ProvisionImmediately: ar.provisionImmediately,
    Status: ar.status,
    ProductIDs: [...ar.productIds],
    PlanID: ar.planId,
    Credentials: credentials.filter((c) => !c.revokedAt).map((c) => credentialResponse(c, box)),
    CreatedAt: portalTime(ar.createdAt),
    UpdatedAt: portalTime(ar.updatedAt),
    // deleted requests are gone, so a request that can be shown was never deleted
    DeletedAt: UNSET_PORTAL_TIME,
  };
}

/** The access-request routes' shape: Products is one string, names joined by ", ". */
export function accessRequestResponse(
  ar: AccessRequestEntity,
  app: AppEntity,
  credentials: CredentialEntity[],
  box: Unsealer,
): AccessRequestResponse {
  return { ...fields(ar, app, credentials, box), Products: ar.products.join(', ') };
}

/** The shape nested in an application: Products is an array. */
export function nestedAccessRequestResponse(
  ar: AccessRequestEntity,
  app: AppEntity,
  credentials: CredentialEntity[],
  box: Unsealer,
): NestedAccessRequestResponse {
  return { ...fields(ar, app, credentials, box), Products: [...ar.products] };
}

/** An application's AccessRequests: `[]` when there are none, otherwise one inner array holding all of them. */
export function nestAccessRequests<T>(items: T[]): T[][] {
  return items.length === 0 ? [] : [items];
}

/**
 * The `Message` of AccessRequestCreated/Approved/Rejected: the portal product's documented keys first (times
 * RFC 3339, `ByUser` the app's user), then the names and request details we add. Never credentials or secrets.
 */
export function accessRequestMessage(ar: AccessRequestEntity, app: AppEntity): MessageOf<AccessRequestEventMessage> {
  return {
    ID: ar.id,
    AppID: ar.appId,
    ByUser: app.userId,
    Status: ar.status,
    ProductIDs: [...ar.productIds],
    PlanID: ar.planId,
    CreatedAt: rfc3339(ar.createdAt),
    UpdatedAt: rfc3339(ar.updatedAt),
    UserID: app.userId,
    Catalogue: ar.catalogue,
    Client: app.name,
    Plan: ar.plan,
    Products: [...ar.products],
    AuthType: ar.authType,
  };
}

/** The `Message` of CredentialRegistered: which credential (its id) went to which request, never the secret values. */
export function credentialMessage(
  c: CredentialEntity,
  ar: AccessRequestEntity,
  app: AppEntity,
): MessageOf<CredentialRegisteredMessage> {
  return {
    ID: c.id,
    ByUser: app.userId,
    AccessRequestID: ar.id,
    AppID: ar.appId,
    CreatedAt: rfc3339(c.createdAt),
    UserID: app.userId,
    AuthType: ar.authType,
    OAuthClientID: c.oauthClientId,
  };
}
