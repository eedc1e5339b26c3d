import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

export const VISIBILITIES = ['personal', 'team', 'organisation'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

/** A developer-portal application. */
@Entity({ name: 'portal_apps' })
export class AppEntity {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT' })
  id: number;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  description: string;

  /** One redirect address, or several separated by commas. */
  @Column({ name: 'redirect_urls', type: 'text', default: '' })
  redirectUrls: string;

  @Column({ name: 'user_id', type: 'integer', default: 0 })
  userId: number;

  @Column({ type: 'text', default: 'organisation' })
  visibility: Visibility;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
