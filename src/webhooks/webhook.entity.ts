import { Column, Entity, OneToMany, PrimaryColumn } from 'typeorm';
import { SignatureScheme } from './send/signing';
import { WebhookHeaderEntity } from './webhook-header.entity';

@Entity({ name: 'webhooks' })
export class WebhookEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text' })
  method: string;

  @Column({ name: 'timeout_seconds', type: 'integer' })
  timeoutSeconds: number;

  @Column({ type: 'text', array: true })
  events: string[];

  @Column({ type: 'boolean' })
  active: boolean;

  /** The current signing key, sealed by SecretBox: a whsec_ secret (v1) or a whsk_ Ed25519 private key (v1a). */
  @Column({ name: 'secret_encrypted', type: 'text' })
  secretEncrypted: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'signature_scheme', type: 'text' })
  signatureScheme: SignatureScheme;

  /** During a rotation's grace period: the key used before it, sealed; erased once the period ends. */
  @Column({ name: 'previous_secret_encrypted', type: 'text', nullable: true })
  previousSecretEncrypted: string | null;

  @Column({ name: 'previous_signature_scheme', type: 'text', nullable: true })
  previousSignatureScheme: SignatureScheme | null;

  /** When deliveries stop being signed with the previous key too. */
  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  /** Why the service switched the webhook off (gone, failing, manual); null while active. */
  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: string | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  /** Start of the current run of failed attempts (null after a success): the clock of automatic disabling. */
  @Column({ name: 'failing_since', type: 'timestamptz', nullable: true })
  failingSince: Date | null;

  /** Deliveries per second at most, across every worker; null: no limit. */
  @Column({ name: 'rate_limit', type: 'integer', nullable: true })
  rateLimit: number | null;

  /** Deliveries are sent one at a time, in event order. */
  @Column({ type: 'boolean', default: false })
  ordered: boolean;

  /** Where deliveries go: http (the URL), rabbitmq or nats (see send/destination-registry.ts). */
  @Column({ type: 'text', default: 'http' })
  type: string;

  /** A broker's URL in clear (it holds credentials), sealed by SecretBox; `url` shows it masked. Null for http. */
  @Column({ name: 'destination_encrypted', type: 'text', nullable: true })
  destinationEncrypted: string | null;

  /** The type's options (Exchange, RoutingKey, Subject...); none hold secrets. */
  @Column({ name: 'destination_options', type: 'jsonb', default: {} })
  destinationOptions: Record<string, string>;

  /** The filter on events as given; null: every event it subscribes to. */
  @Column({ type: 'jsonb', nullable: true })
  filter: object | null;

  /** The filter compiled to the jsonpath predicate fan-out evaluates. */
  @Column({ name: 'filter_path', type: 'jsonpath', nullable: true })
  filterPath: string | null;

  @OneToMany(() => WebhookHeaderEntity, (h) => h.webhook)
  headers?: WebhookHeaderEntity[];
}
