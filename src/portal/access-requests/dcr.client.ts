import { Injectable, Logger } from '@nestjs/common';
import { request } from 'undici';
import { AppConfig } from '../../config';
import { isStorableText } from '../../common/http/input-policy';
import { AccessRequestError } from './access-requests.errors';

/** How long an identity provider may take to answer a registration. */
export const DCR_TIMEOUT_MS = 10_000;

/** An RFC 7591 §2 client metadata document. */
export interface DcrRegistrationRequest {
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  scope: string;
  token_endpoint_auth_method: string;
}

/** What we keep of an RFC 7591 §3.2.1 registration reply. */
export interface DcrRegistration {
  clientId: string;
  clientSecret: string;
  registrationAccessToken: string;
  registrationClientUri: string;
  /** Seconds since the epoch; 0 or absent: never. */
  clientSecretExpiresAt: number;
  /** The reply exactly as received (JSON text). */
  raw: string;
  body: Record<string, unknown>;
}

/**
 * Registers OAuth clients at the configured identity provider by RFC 7591 dynamic client registration
 * (config.dcr: DCR_REGISTRATION_ENDPOINT, DCR_INITIAL_ACCESS_TOKEN). Any failure, non-2xx answer, reply
 * without client_id, or timeout is an AccessRequestError (502).
 */
@Injectable()
export class DcrClient {
  private readonly logger = new Logger(DcrClient.name);
  /** Time limit of one registration; tests lower it so a hanging provider does not stall them. */
  timeoutMs = DCR_TIMEOUT_MS;

  constructor(private readonly config: AppConfig) {}

  async register(metadata: DcrRegistrationRequest): Promise<DcrRegistration> {
    const endpoint = this.config.dcr.registrationEndpoint;
    if (!endpoint) throw AccessRequestError.dcrNotConfigured();
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.config.dcr.initialAccessToken) headers.authorization = `Bearer ${this.config.dcr.initialAccessToken}`;

    let status: number;
    let raw: string;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    try {
      const res = await request(endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(metadata),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: deadline,
      });
      status = res.statusCode;
      raw = await res.body.text();
    } catch (err) {
      const code = (err as { code?: string }).code;
      const timedOut = deadline.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
      this.logger.warn(
        { reason: err instanceof Error ? err.message : String(err), timedOut },
        'dynamic client registration: no answer',
      );
      throw AccessRequestError.dcrFailed(
        timedOut
          ? `the identity provider did not answer within ${this.timeoutMs} ms`
          : 'the identity provider could not be reached',
      );
    }
    if (status < 200 || status > 299) {
      this.logger.warn({ status }, 'dynamic client registration refused');
      throw AccessRequestError.dcrFailed(`the identity provider answered HTTP ${status}`);
    }
    try {
      return parseRegistration(raw);
    } catch (err) {
      await this.withdrawUnusable(raw);
      throw err;
    }
  }

  /**
   * A 2xx reply we cannot use may still have registered a client that nobody will hold the secret of: it is
   * deleted again when the reply names where and how (best effort, logged by client id only).
   */
  private async withdrawUnusable(raw: string): Promise<void> {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return;
    }
    if (!body || typeof body !== 'object') return;
    const b = body as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' && isStorableText(v) ? v : '');
    const outcome = await deleteRegistration(
      {
        registrationClientUri: text(b.registration_client_uri),
        registrationAccessToken: text(b.registration_access_token),
      },
      this.timeoutMs,
    );
    const clientId = text(b.client_id);
    if (outcome.deleted) this.logger.log({ clientId }, 'unusable dynamic client registration withdrawn');
    else
      this.logger.warn(
        { clientId, reason: outcome.reason },
        'unusable dynamic client registration could not be withdrawn; delete the client at the identity provider',
      );
  }
}

/** The latest client_secret_expires_at a credential's `YYYY-MM-DD HH:MM` can show: 9999-12-31 23:59:59 UTC. */
const LATEST_EXPIRY_SECONDS = 253_402_300_799;

/** The reply's members kept as text: each must be one a database text value holds as it is. */
const TEXT_MEMBERS = [
  'client_id',
  'client_secret',
  'registration_access_token',
  'registration_client_uri',
  'scope',
  'token_endpoint_auth_method',
] as const;

/** How an RFC 7592 deletion of a registration went; it never throws, as it undoes work after another failure. */
export type DcrDeletion = { deleted: true } | { deleted: false; reason: string };

/**
 * RFC 7592 §2.3: deletes a client registered here, with its registration access token, at its client
 * configuration endpoint (registration_client_uri). Used to undo a registration whose approval could not
 * be committed, so the provider does not keep a client nobody knows the secret of.
 */
export async function deleteRegistration(
  registration: Pick<DcrRegistration, 'registrationClientUri' | 'registrationAccessToken'>,
  timeoutMs = DCR_TIMEOUT_MS,
): Promise<DcrDeletion> {
  const { registrationClientUri: uri, registrationAccessToken: token } = registration;
  if (!uri || !token)
    return { deleted: false, reason: 'the provider gave no registration_client_uri and registration_access_token' };
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: deadline,
    });
    await res.body.dump();
    // 204 is the answer RFC 7592 gives; any 2xx means the client is gone
    if (res.statusCode >= 200 && res.statusCode <= 299) return { deleted: true };
    return { deleted: false, reason: `the identity provider answered HTTP ${res.statusCode}` };
  } catch (err) {
    const code = (err as { code?: string }).code;
    const timedOut = deadline.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
    return {
      deleted: false,
      reason: timedOut
        ? `the identity provider did not answer within ${timeoutMs} ms`
        : 'the identity provider could not be reached',
    };
  }
}

/** Reads an RFC 7591 registration reply; refuses anything without a client_id. */
export function parseRegistration(raw: string): DcrRegistration {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw AccessRequestError.dcrFailed('the identity provider answered with something that is not JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw AccessRequestError.dcrFailed('the identity provider answered with something that is not a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.client_id !== 'string' || b.client_id === '')
    throw AccessRequestError.dcrFailed('the identity provider answered without a client_id');
  // NUL has no place in a database text value and a lone surrogate no UTF-8 form: such a member cannot be kept
  for (const name of TEXT_MEMBERS) {
    const v = b[name];
    if (typeof v === 'string' && !isStorableText(v))
      throw AccessRequestError.dcrFailed(`the identity provider answered a ${name} that cannot be stored`);
  }
  if (Array.isArray(b.response_types) && b.response_types.some((v) => typeof v === 'string' && !isStorableText(v)))
    throw AccessRequestError.dcrFailed('the identity provider answered a response_types that cannot be stored');
  const expiresAt = b.client_secret_expires_at;
  if (typeof expiresAt === 'number' && expiresAt > LATEST_EXPIRY_SECONDS)
    throw AccessRequestError.dcrFailed(
      `the identity provider answered a client_secret_expires_at after 9999-12-31 (${LATEST_EXPIRY_SECONDS})`,
    );
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    clientId: b.client_id,
    clientSecret: str(b.client_secret),
    registrationAccessToken: str(b.registration_access_token),
    registrationClientUri: str(b.registration_client_uri),
    clientSecretExpiresAt: typeof expiresAt === 'number' ? expiresAt : 0,
    raw,
    body: b,
  };
}
