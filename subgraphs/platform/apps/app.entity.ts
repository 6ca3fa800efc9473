import { Entity, Enum, Index, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

/**
 * Where an app stands, as the API reports it (deploy-status refines it live):
 * Pending (saved; its resource or first commit is on the way), Syncing (committed, not yet applied
 * by the GitOps controller), Deploying (applied, rolling out),
 * Verifying (workload ready, address not yet reachable), Running (reachable), Failed (the
 * revision failed: image pull, crash loop, progress deadline), Stopped (scaled to zero by stop),
 * Deleting.
 */
export enum AppPhase {
  Pending = 'Pending',
  Syncing = 'Syncing',
  Deploying = 'Deploying',
  Verifying = 'Verifying',
  Running = 'Running',
  Failed = 'Failed',
  Stopped = 'Stopped',
  Deleting = 'Deleting',
}

registerEnumType(AppPhase, { name: 'AppPhase', description: 'Pending, Syncing, Deploying, Verifying, Running, Failed, Stopped, Deleting.' });

/** One environment variable as stored: secret values are sealed and never read back. */
export interface StoredEnvVar {
  name: string;
  value: string | null;
  sealed: string | null;
  secret: boolean;
}

export interface Autoscaling {
  minReplicas: number;
  maxReplicas: number;
  targetCpuPercent: number;
}

export interface HealthCheck {
  path: string;
  port: number;
  initialDelaySecs: number;
  periodSecs: number;
}

/** An app: its desired state (what Git gets) and what the platform last saw of it. */
@Entity({ tableName: 'app' })
@TenantScoped()
@Unique({ name: 'app_cloudspace_name_key', properties: ['cloudspaceId', 'name'] })
@Index({ name: 'app_tenant_created_idx', properties: ['tenantId', 'createdAt', 'id'] })
@ObjectType({ description: 'An app running in a CloudSpace\'s virtual cluster, deployed through Git.' })
export class App {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'phase' | 'message' | 'domain' | 'autoscaling' | 'env' | 'healthCheck' | 'stoppedReplicas' | 'lastCommit' | 'lastCommitAt' | 'reportedCommit' | 'change' | 'restartedAt' | 'generation';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  tenantId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID)
  cloudspaceId!: string;

  @Property({ type: 'text' })
  @Field({ description: 'DNS label, unique in the CloudSpace.' })
  name!: string;

  /** The target virtual cluster (`tenant_cr_name`, or the CloudSpace's default). */
  @Property({ type: 'text' })
  @Field({ description: 'Virtual cluster it runs in (`tenant_cr_name`).' })
  vcluster!: string;

  @Property({ type: 'text' })
  @Field()
  image!: string;

  @Property({ type: 'integer' })
  @Field(() => Int)
  port!: number;

  @Property({ type: 'text' })
  @Field()
  cpuRequest!: string;

  @Property({ type: 'text' })
  @Field()
  memoryRequest!: string;

  @Property({ type: 'boolean' })
  @Field()
  tls!: boolean;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Custom domain; the address when set.' })
  domain: string | null = null;

  @Property({ type: 'text' })
  @Field({ description: 'Computed by the platform: `<app>-<cloudspace>.{apps_base_domain}` or the custom domain.' })
  address!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Desired replicas (0 while stopped).' })
  replicas!: number;

  /** The replica count stop remembered, restored by start. */
  @Property({ type: 'integer', nullable: true })
  stoppedReplicas: number | null = null;

  @Property({ type: 'jsonb', nullable: true })
  autoscaling: Autoscaling | null = null;

  @Property({ type: 'jsonb' })
  env: StoredEnvVar[] = [];

  @Property({ type: 'jsonb', nullable: true })
  healthCheck: HealthCheck | null = null;

  /** Bumped on every change of desired state; the PlatformApp resource carries it. */
  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Version of the desired state.' })
  generation: number = 1;

  /** What the last change was, for the commit message. */
  @Property({ type: 'text' })
  change: string = 'created';

  /** Set by restart: the pod template annotation kubectl uses, so Git carries the restart too. */
  @Property({ type: 'text', nullable: true })
  restartedAt: string | null = null;

  @Enum({ items: () => AppPhase, type: 'text' })
  @Field(() => AppPhase)
  phase: AppPhase = AppPhase.Pending;

  @Property({ type: 'text' })
  @Field()
  message: string = '';

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Fleet-repository commit of the current desired state.' })
  lastCommit: string | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  lastCommitAt: Date | null = null;

  /** The commit whose outcome (app.deployed / app.deploy_failed) was last reported. */
  @Property({ type: 'text', nullable: true })
  reportedCommit: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();
}

/** Tags and notes of one revision of an app, kept by the platform (revisions themselves are read live). */
@Entity({ tableName: 'app_revision_note' })
@TenantScoped()
@Unique({ name: 'app_revision_note_key', properties: ['appId', 'revision'] })
export class AppRevisionNote {
  [OptionalProps]?: 'id' | 'tags' | 'notes' | 'updatedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  tenantId!: string;

  @Property({ type: 'uuid' })
  appId!: string;

  @Property({ type: 'integer' })
  revision!: number;

  @Property({ type: 'text[]' })
  tags: string[] = [];

  @Property({ type: 'text' })
  notes: string = '';

  @Property({ type: 'timestamptz' })
  updatedAt: Date = new Date();
}
