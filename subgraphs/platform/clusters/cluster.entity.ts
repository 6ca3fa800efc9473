import { Entity, Enum, Index, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

/**
 * Setup phases of a cluster (spec 3 leaves them to us): those of Cluster API's
 * `Cluster.status.phase` for created clusters; a connected or self-registered cluster is
 * Provisioned once its API answered.
 */
export enum ClusterPhase {
  Pending = 'Pending',
  Provisioning = 'Provisioning',
  Provisioned = 'Provisioned',
  Deleting = 'Deleting',
  Failed = 'Failed',
}

export enum ClusterSource {
  /** An existing cluster, reached with the kubeconfig its owner gave (sealed at rest). */
  connected = 'connected',
  /** Created through Cluster API resources on the management cluster. */
  cluster_api = 'cluster_api',
  /** The management cluster the platform runs on. */
  self = 'self',
}

registerEnumType(ClusterPhase, { name: 'ClusterPhase', description: 'Pending → Provisioning → Provisioned; Deleting; Failed.' });
registerEnumType(ClusterSource, { name: 'ClusterSource' });

@Entity({ tableName: 'cluster' })
@TenantScoped()
@Unique({ name: 'cluster_tenant_name_key', properties: ['tenantId', 'name'] })
@Index({ name: 'cluster_tenant_created_idx', properties: ['tenantId', 'createdAt', 'id'] })
@Index({ name: 'cluster_phase_idx', properties: ['phase', 'leaseUntil'] })
@ObjectType({ description: 'A Kubernetes cluster the platform manages: connected, created through Cluster API, or the platform\'s own.' })
export class Cluster {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'phase' | 'message' | 'kubeconfigSealed' | 'capiName' | 'infrastructureKind' | 'kubernetesVersion' | 'leaseUntil' | 'provisionedAt';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  /** Null for platform-wide clusters (registered by a platform administrator), which host every tenant's CloudSpaces. */
  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'Owning tenant; null for the platform\'s shared clusters.' })
  tenantId!: string | null;

  @Property({ type: 'text' })
  @Field()
  name!: string;

  @Enum({ items: () => ClusterSource, type: 'text' })
  @Field(() => ClusterSource)
  source!: ClusterSource;

  @Enum({ items: () => ClusterPhase, type: 'text' })
  @Field(() => ClusterPhase)
  phase: ClusterPhase = ClusterPhase.Pending;

  @Property({ type: 'text' })
  @Field({ description: 'What happened last, in words.' })
  message: string = '';

  @Property({ type: 'text', nullable: true, hidden: true })
  kubeconfigSealed: string | null = null;

  /** Name of the Cluster API `Cluster` in CLUSTER_API_NAMESPACE. */
  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Cluster API Cluster name, for created clusters.' })
  capiName: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Cluster API infrastructure kind, for created clusters.' })
  infrastructureKind: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  kubernetesVersion: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  leaseUntil: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  provisionedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();

  /** Live node counts, filled by the detail query (not stored). */
  @Field(() => ClusterNodes, { nullable: true, description: 'Live node counts (detail only; null when the cluster cannot be reached).' })
  nodes?: ClusterNodes | null;
}

@ObjectType()
export class ClusterNodes {
  @Field(() => Int) total!: number;
  @Field(() => Int) ready!: number;
}
