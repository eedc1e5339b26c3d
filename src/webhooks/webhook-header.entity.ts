import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WebhookEntity } from './webhook.entity';

@Entity({ name: 'webhook_headers' })
export class WebhookHeaderEntity {
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  @ManyToOne(() => WebhookEntity, (w) => w.headers, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id' })
  webhook?: WebhookEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  value: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
