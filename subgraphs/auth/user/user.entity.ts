import { Collection, Entity, ManyToMany, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { TenantScoped } from '../../../kernel/tenancy.js';
import { Field, ID, ObjectType } from 'type-graphql';
import { Role } from '../role/role.entity.js';

/** A person who signs in. Platform-wide accounts (the super-admin) have no tenant. */
@Entity({ tableName: 'user' })
@TenantScoped()
@ObjectType({ description: 'A person who signs in.' })
export class User {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'active' | 'emailVerified' | 'tenantId' | 'lastLoginAt';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid', nullable: true, index: 'user_tenant_idx' })
  @Field(() => ID, { nullable: true, description: 'Null for platform-wide accounts.' })
  tenantId: string | null = null;

  /** Stored lower-case; unique. */
  @Property({ type: 'text', unique: 'user_email_unique' })
  @Field()
  email!: string;

  /** Stored lower-case; unique. */
  @Property({ type: 'text', unique: 'user_username_unique' })
  @Field()
  username!: string;

  @Property({ type: 'text', hidden: true })
  passwordHash!: string;

  @Property({ type: 'boolean' })
  @Field()
  active: boolean = true;

  @Property({ type: 'boolean' })
  @Field()
  emailVerified: boolean = false;

  @ManyToMany({ entity: () => Role, pivotTable: 'auth.user_role', joinColumn: 'user_id', inverseJoinColumn: 'role_id' })
  roles = new Collection<Role>(this);

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  lastLoginAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();
}
