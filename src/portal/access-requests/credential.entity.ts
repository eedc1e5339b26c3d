import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A credential issued when an access request is approved.
 * Every `*Encrypted` column holds a SecretBox-sealed value, never the secret itself.
 * Revoked credentials keep their row (revokedAt set) and are no longer shown. Keyed by (access request, id): every
 * read goes through the request.
 */
@Entity({ name: 'portal_credentials' })
export class CredentialEntity {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT' })
  id: number;

  @PrimaryColumn({ name: 'access_request_id', type: 'integer' })
  accessRequestId: number;

  /** authToken: the key, sealed. */
  @Column({ name: 'credential_encrypted', type: 'text', nullable: true })
  credentialEncrypted: string | null;

  /** authToken: hex SHA-256 of the key. */
  @Column({ name: 'credential_hash', type: 'char', length: 64, nullable: true })
  credentialHash: string | null;

  @Column({ name: 'oauth_client_id', type: 'text', default: '' })
  oauthClientId: string;

  @Column({ name: 'oauth_client_secret_encrypted', type: 'text', nullable: true })
  oauthClientSecretEncrypted: string | null;

  @Column({ name: 'redirect_uri', type: 'text', default: '' })
  redirectUri: string;

  @Column({ type: 'text', default: '' })
  scope: string;

  @Column({ name: 'response_type', type: 'text', default: '' })
  responseType: string;

  @Column({ name: 'token_endpoints', type: 'text', default: '' })
  tokenEndpoints: string;

  /**
   * The identity provider's registration reply (JSON text), sealed: it carries client_secret and the registration
   * token.
   */
  @Column({ name: 'dcr_response_encrypted', type: 'text', nullable: true })
  dcrResponseEncrypted: string | null;

  @Column({ name: 'dcr_registration_access_token_encrypted', type: 'text', nullable: true })
  dcrRegistrationAccessTokenEncrypted: string | null;

  @Column({ name: 'dcr_registration_client_uri', type: 'text', default: '' })
  dcrRegistrationClientUri: string;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
