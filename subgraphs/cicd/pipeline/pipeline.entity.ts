import { Entity, Enum, Index, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

export enum PipelineProvider {
  /** The first supported Git host (signed with X-Hub-Signature-256). */
  host_a = 'host_a',
  /** The second supported Git host (X-Git-Token). */
  host_b = 'host_b',
  /** Any other CI, reporting through the reporting token only. */
  generic = 'generic',
}

export enum TriggerEvent {
  push = 'push',
  pull_request = 'pull_request',
  manual = 'manual',
  schedule = 'schedule',
}

registerEnumType(PipelineProvider, { name: 'PipelineProvider' });
registerEnumType(TriggerEvent, { name: 'TriggerEvent' });

/** A CI pipeline of a tenant's repository (spec 2). */
@Entity({ tableName: 'pipeline' })
@TenantScoped()
@Index({ name: 'pipeline_repository_idx', properties: ['repository'] })
@ObjectType({ description: 'A CI pipeline of a repository.' })
export class Pipeline {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'deployClusterId';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  tenantId!: string;

  @Property({ type: 'text' })
  @Field()
  name!: string;

  /** `owner/name`, stored lower-case, as the Git hosts name it in webhook payloads. */
  @Property({ type: 'text' })
  @Field({ description: 'Repository as the Git host names it, e.g. `acme/shop`.' })
  repository!: string;

  @Property({ type: 'text' })
  @Field()
  branch!: string;

  @Enum({ items: () => PipelineProvider, type: 'text' })
  @Field(() => PipelineProvider)
  provider!: PipelineProvider;

  @Property({ type: 'text[]' })
  @Field(() => [TriggerEvent])
  triggerEvents!: TriggerEvent[];

  /**
   * When set, a successful run deploys to this cluster: its completion also publishes
   * `cicd.{provider}.deployed`. A run report may name another cluster (`cluster_id`).
   */
  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Cluster a successful run deploys to; its completion publishes cicd.{provider}.deployed.' })
  deployClusterId: string | null = null;

  /** The webhook secret, AES-256-GCM sealed with SECRET_ENCRYPTION_KEY. */
  @Property({ type: 'text', hidden: true })
  webhookSecretSealed!: string;

  /** SHA-256 of the reporting token. */
  @Property({ type: 'text', hidden: true, unique: 'pipeline_reporting_token_unique' })
  reportingTokenHash!: string;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();
}
