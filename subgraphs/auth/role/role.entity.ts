import { Entity, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, ObjectType } from 'type-graphql';
import type { Scope } from '../../../kernel/identity.js';

/**
 * A named set of permissions. Permissions are the scopes of spec 5.3 that a member of the role
 * may use (`read`, `deploy`, `actions`, `agents`, `admin`). Built-in roles (no tenant) are seeded
 * by migration and cannot be changed; tenants add their own.
 */
@Entity({ tableName: 'role' })
@Unique({ name: 'role_tenant_name_unique', properties: ['tenantId', 'name'] })
@ObjectType({ description: 'A named set of permissions; built-in roles are shared by every tenant and cannot be changed.' })
export class Role {
  [OptionalProps]?: 'id' | 'createdAt' | 'description' | 'builtIn' | 'tenantId';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'Owning tenant; null for built-in roles.' })
  tenantId: string | null = null;

  @Property({ type: 'text' })
  @Field()
  name!: string;

  @Property({ type: 'text' })
  @Field()
  description: string = '';

  @Property({ type: 'text[]' })
  @Field(() => [String], { description: 'Scopes members may use: read, deploy, actions, agents, admin.' })
  permissions!: Scope[];

  @Property({ type: 'boolean' })
  @Field()
  builtIn: boolean = false;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();
}
