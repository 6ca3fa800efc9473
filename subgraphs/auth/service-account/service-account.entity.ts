import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { TenantScoped } from '../../../kernel/tenancy.js';
import { Field, ID, ObjectType } from 'type-graphql';
import type { Scope } from '../../../kernel/identity.js';

/** A program's identity for server-to-server calls (OAuth2 client credentials, spec 5.4). */
@Entity({ tableName: 'service_account' })
@TenantScoped()
@ObjectType({ description: 'A program\'s identity for server-to-server calls (OAuth2 client credentials).' })
export class ServiceAccount {
  [OptionalProps]?: 'id' | 'createdAt' | 'disabledAt' | 'tenantId' | 'description';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'Null for platform-wide service accounts (created by a super-admin).' })
  tenantId: string | null = null;

  @Property({ type: 'text' })
  @Field()
  name!: string;

  @Property({ type: 'text' })
  @Field()
  description: string = '';

  @Property({ type: 'text', unique: 'service_account_client_id_unique' })
  @Field()
  clientId!: string;

  @Property({ type: 'text', hidden: true })
  secretHash!: string;

  @Property({ type: 'text[]' })
  @Field(() => [String])
  allowedScopes!: Scope[];

  @Property({ type: 'text' })
  @Field({ description: 'Subject that created it.' })
  createdBy!: string;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  disabledAt: Date | null = null;
}
