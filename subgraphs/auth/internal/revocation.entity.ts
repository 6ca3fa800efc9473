import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';

export type RevocationKind = 'session' | 'credential' | 'subject';

/**
 * The revocation feed the edge follows: a logout, a refresh-token reuse, a revoked token or a
 * disabled account appends a row; each edge polls for rows after the last id it saw and refuses
 * matching credentials until the row expires (when no token it covers can still be valid).
 */
@Entity({ tableName: 'revocation' })
export class Revocation {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Property({ type: 'text' })
  kind!: RevocationKind;

  @Property({ type: 'text' })
  value!: string;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', index: 'revocation_expires_idx' })
  expiresAt!: Date;
}
