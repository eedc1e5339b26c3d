import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { AccessRequestStatus } from './access-request-state';

export const AUTH_TYPES = ['authToken', 'oauth2.0'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

/** A request for access to products of a catalogue on behalf of an app. */
@Entity({ name: 'portal_access_requests' })
export class AccessRequestEntity {
  @PrimaryGeneratedColumn('identity', { type: 'integer', generatedIdentity: 'BY DEFAULT' })
  id: number;

  @Column({ name: 'app_id', type: 'integer' })
  appId: number;

  @Column({ type: 'text' })
  catalogue: string;

  @Column({ type: 'text' })
  plan: string;

  @Column({ type: 'text', array: true })
  products: string[];

  /** Ids of the portal's catalogue entries for the products; `[]` when the client gave none. */
  @Column({ name: 'product_ids', type: 'integer', array: true, default: () => "'{}'" })
  productIds: number[];

  /** Id of the portal's catalogue entry for the plan; 0 when the client gave none. */
  @Column({ name: 'plan_id', type: 'integer', default: 0 })
  planId: number;

  @Column({ name: 'auth_type', type: 'text' })
  authType: AuthType;

  @Column({ name: 'dcr_enabled', type: 'boolean', default: false })
  dcrEnabled: boolean;

  @Column({ name: 'provision_immediately', type: 'boolean', default: false })
  provisionImmediately: boolean;

  /** The user descriptor given at creation, e.g. `User#1`. */
  @Column({ name: 'user_ref', type: 'text' })
  user: string;

  @Column({ type: 'text', default: 'pending' })
  status: AccessRequestStatus;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
