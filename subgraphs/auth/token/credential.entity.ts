import { Entity, Enum, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { TenantScoped } from '../../../kernel/tenancy.js';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { Scope } from '../../../kernel/identity.js';

export enum CredentialKind {
  /** Personal access token: a user's, scoped, always expiring. */
  pat = 'pat',
  /** API key: long-lived, for programs; a user's or a service account's. */
  apiKey = 'api_key',
}
registerEnumType(CredentialKind, { name: 'CredentialKind' });

/**
 * A personal access token or an API key. Only a SHA-256 hash of the value is stored (values are
 * 178-bit random, so a fast hash is enough), with its last four characters for recognition.
 */
@Entity({ tableName: 'credential' })
@TenantScoped()
@ObjectType('Credential', { description: 'A personal access token or API key. The value itself is shown once, at creation.' })
export class Credential {
  [OptionalProps]?: 'id' | 'createdAt' | 'lastUsedAt' | 'revokedAt' | 'expiresAt' | 'userId' | 'serviceAccountId' | 'tenantId' | 'scopes';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Enum({ items: () => CredentialKind, type: 'text' })
  @Field(() => CredentialKind)
  kind!: CredentialKind;

  @Property({ type: 'uuid', nullable: true, index: 'credential_user_idx' })
  @Field(() => ID, { nullable: true })
  userId: string | null = null;

  @Property({ type: 'uuid', nullable: true, index: 'credential_service_account_idx' })
  @Field(() => ID, { nullable: true })
  serviceAccountId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true })
  tenantId: string | null = null;

  @Property({ type: 'text' })
  @Field()
  name!: string;

  @Property({ type: 'text', unique: 'credential_hash_unique', hidden: true })
  hash!: string;

  @Property({ type: 'text' })
  @Field({ description: 'Last four characters of the value, to recognise it.' })
  lastFour!: string;

  /** Null: the owner's full permissions (API keys). */
  @Property({ type: 'text[]', nullable: true })
  @Field(() => [String], { nullable: true, description: 'Scopes the credential is limited to; null means the owner\'s full permissions.' })
  scopes: Scope[] | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  expiresAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  lastUsedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;
}
