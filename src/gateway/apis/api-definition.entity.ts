import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ApiListEntry, ApiType, AuthType } from './projection';
import type { OasDocument } from './oas-document';

/**
 * A managed API: the OAS document as sent (with the gateway extension) and the columns projected
 * from it on every write (projection.ts), which the dashboard filters, sorts and pages on.
 */
@Entity({ name: 'api_definitions' })
export class ApiDefinitionEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'org_id', type: 'text', default: '' })
  orgId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'api_type', type: 'text', default: 'rest' })
  apiType: ApiType;

  @Column({ type: 'text', array: true, default: () => `'{}'` })
  categories: string[];

  @Column({ name: 'auth_types', type: 'text', array: true, default: () => `'{}'` })
  authTypes: AuthType[];

  /** ids of the child versions a base definition lists (versioning). */
  @Column({ name: 'child_ids', type: 'text', array: true, default: () => `'{}'` })
  childIds: string[];

  /** Listed as a version by another definition of the same organisation. */
  @Column({ name: 'is_child', type: 'boolean', default: false })
  isChild: boolean;

  /** json, not jsonb: the document keeps its key order. */
  @Column({ type: 'json' })
  oas: OasDocument;

  /** json, not jsonb: the entry keeps the member order the list answer shows. */
  @Column({ name: 'list_entry', type: 'json' })
  listEntry: ApiListEntry;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
