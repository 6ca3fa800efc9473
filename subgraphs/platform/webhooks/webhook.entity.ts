import { Entity, Index, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, ObjectType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

/** A tenant's outbound webhook subscription (spec 4.6). */
@Entity({ tableName: 'webhook_subscription' })
@TenantScoped()
@Index({ name: 'webhook_subscription_tenant_created_idx', properties: ['tenantId', 'createdAt', 'id'] })
@ObjectType({ description: 'An HTTPS endpoint that receives signed events. The signing secret is shown once, at creation and rotation.' })
export class WebhookSubscription {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'description' | 'enabled' | 'clusterIds' | 'cloudspaceIds' | 'previousSecretSealed' | 'previousSecretExpiresAt';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  tenantId!: string;

  @Property({ type: 'text' })
  @Field({ description: 'HTTPS URL deliveries are POSTed to.' })
  url!: string;

  /** Event types, or `["*"]` for all. */
  @Property({ type: 'text[]' })
  @Field(() => [String], { description: 'Event types of the catalogue, or ["*"] for every event.' })
  events!: string[];

  @Property({ type: 'text[]', nullable: true })
  @Field(() => [String], { nullable: true, description: 'Only events of these clusters; null for all.' })
  clusterIds: string[] | null = null;

  @Property({ type: 'text[]', nullable: true })
  @Field(() => [String], { nullable: true, description: 'Only events of these CloudSpaces; null for all.' })
  cloudspaceIds: string[] | null = null;

  @Property({ type: 'text' })
  @Field()
  description: string = '';

  @Property({ type: 'boolean' })
  @Field()
  enabled: boolean = true;

  /** Current signing secret, AES-256-GCM sealed. */
  @Property({ type: 'text', hidden: true })
  secretSealed!: string;

  /** The secret before the last rotation, still signing (as a second `v1=`) until it expires. */
  @Property({ type: 'text', nullable: true, hidden: true })
  previousSecretSealed: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'Until when deliveries are also signed with the previous secret.' })
  previousSecretExpiresAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();
}
