import { Column, Entity, OneToMany, PrimaryColumn } from 'typeorm';
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

  /** The whsec_ signing secret, sealed by SecretBox. */
  @Column({ name: 'secret_encrypted', type: 'text' })
  secretEncrypted: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @OneToMany(() => WebhookHeaderEntity, (h) => h.webhook)
  headers?: WebhookHeaderEntity[];
}
