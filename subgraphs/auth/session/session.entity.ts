import { Entity, Index, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';

/**
 * A login. Its refresh tokens form one family: each is used once and replaced; presenting a used
 * one again means it was stolen, and the whole session is revoked. Access tokens carry the
 * session id (`sid`) so that revoking the session stops them too (see the revocation feed).
 */
@Entity({ tableName: 'session' })
export class Session {
  [OptionalProps]?: 'id' | 'createdAt' | 'revokedAt' | 'revokedReason' | 'tenantId' | 'lastRefreshedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid', index: 'session_user_idx' })
  userId!: string;

  @Property({ type: 'uuid', nullable: true })
  tenantId: string | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  lastRefreshedAt: Date | null = null;

  /** When the last refresh token of the session expires. */
  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  revokedReason: string | null = null;
}

@Entity({ tableName: 'refresh_token' })
@Index({ name: 'refresh_token_session_idx', properties: ['sessionId'] })
export class RefreshToken {
  [OptionalProps]?: 'issuedAt' | 'usedAt';

  /** The token's `jti`. */
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Property({ type: 'uuid' })
  sessionId!: string;

  @Property({ type: 'timestamptz' })
  issuedAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  usedAt: Date | null = null;
}
