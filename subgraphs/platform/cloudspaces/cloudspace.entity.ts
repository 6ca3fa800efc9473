import { Entity, Enum, Index, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

/**
 * CloudSpace provisioning states: Pending (saved) → Provisioning (namespace, quota and default
 * virtual cluster being created) → Ready (its virtual cluster answers) | Failed; Deleting (its
 * namespace and everything in it are being removed; then the row goes).
 */
export enum CloudSpaceStatus {
  Pending = 'Pending',
  Provisioning = 'Provisioning',
  Ready = 'Ready',
  Failed = 'Failed',
  Deleting = 'Deleting',
}

registerEnumType(CloudSpaceStatus, { name: 'CloudSpaceStatus', description: 'Pending → Provisioning → Ready | Failed; Deleting.' });

@Entity({ tableName: 'cloudspace' })
@TenantScoped()
@Unique({ name: 'cloudspace_tenant_name_key', properties: ['tenantId', 'name'] })
@Unique({ name: 'cloudspace_namespace_key', properties: ['clusterId', 'namespace'] })
@Index({ name: 'cloudspace_tenant_created_idx', properties: ['tenantId', 'createdAt', 'id'] })
@Index({ name: 'cloudspace_status_idx', properties: ['status', 'leaseUntil'] })
@ObjectType({ description: 'A tenant environment: a namespace on a cluster with a resource quota and one or more virtual clusters.' })
export class CloudSpace {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'status' | 'message' | 'leaseUntil' | 'readyAt' | 'attempts';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  tenantId!: string;

  @Property({ type: 'text' })
  @Field({ description: 'DNS label, unique in the tenant; part of app addresses.' })
  name!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID)
  clusterId!: string;

  @Property({ type: 'text' })
  @Field({ description: 'Namespace on the host cluster.' })
  namespace!: string;

  @Property({ type: 'text' })
  @Field({ description: 'The virtual cluster apps go to unless they name another.' })
  defaultVcluster!: string;

  @Enum({ items: () => CloudSpaceStatus, type: 'text' })
  @Field(() => CloudSpaceStatus)
  status: CloudSpaceStatus = CloudSpaceStatus.Pending;

  @Property({ type: 'text' })
  @Field()
  message: string = '';

  @Property({ type: 'text' })
  @Field({ description: 'ResourceQuota requests.cpu (Kubernetes quantity).' })
  cpuLimit!: string;

  @Property({ type: 'text' })
  @Field({ description: 'ResourceQuota requests.memory (Kubernetes quantity).' })
  memoryLimit!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'ResourceQuota pods.' })
  podLimit!: number;

  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'timestamptz', nullable: true })
  leaseUntil: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  readyAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();
}
