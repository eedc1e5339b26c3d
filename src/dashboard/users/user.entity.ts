import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type PermissionLevel = 'read' | 'write' | 'deny' | 'admin';
export type UserPermissions = Record<string, string>;

@Entity({ name: 'dashboard_users' })
export class UserEntity {
  @PrimaryColumn({ type: 'char', length: 24 })
  id: string;

  @Column({ name: 'org_id', type: 'text', default: '' })
  orgId: string;

  @Column({ name: 'email_address', type: 'text' })
  emailAddress: string;

  @Column({ name: 'first_name', type: 'text' })
  firstName: string;

  @Column({ name: 'last_name', type: 'text' })
  lastName: string;

  @Column({ type: 'boolean', default: false })
  active: boolean;

  @Column({ name: 'user_permissions', type: 'jsonb', default: () => `'{}'` })
  userPermissions: UserPermissions;

  /** hex SHA-256 of the access key: what Bearer authentication looks up. */
  @Column({ name: 'access_key_hash', type: 'char', length: 64, unique: true })
  accessKeyHash: string;

  /** The access key itself, AES-GCM sealed (SecretBox), so it can be shown to its owner again. */
  @Column({ name: 'access_key_encrypted', type: 'text' })
  accessKeyEncrypted: string;

  @Column({ name: 'password_hash', type: 'text', nullable: true })
  passwordHash: string | null;

  @Column({ name: 'group_id', type: 'text', default: '' })
  groupId: string;

  @Column({ name: 'password_max_days', type: 'integer', default: 0 })
  passwordMaxDays: number;

  @Column({ name: 'api_model', type: 'jsonb', default: () => `'{}'` })
  apiModel: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_login_date', type: 'timestamptz', nullable: true })
  lastLoginDate: Date | null;

  @Column({ name: 'password_updated', type: 'timestamptz', nullable: true })
  passwordUpdated: Date | null;
}
