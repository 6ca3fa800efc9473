import { Collection, Entity, Enum, Index, ManyToOne, OneToMany, OptionalProps, PrimaryKey, Property, type Rel } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

export enum RunStatus {
  queued = 'queued',
  running = 'running',
  success = 'success',
  failed = 'failed',
  cancelled = 'cancelled',
}
registerEnumType(RunStatus, { name: 'RunStatus', description: 'queued → running → success | failed | cancelled; a finished run never changes status again.' });

export const FINISHED: readonly RunStatus[] = [RunStatus.success, RunStatus.failed, RunStatus.cancelled];

/** One execution of a pipeline (spec 2 PipelineRun). */
@Entity({ tableName: 'pipeline_run' })
@TenantScoped()
@Index({ name: 'pipeline_run_pipeline_created_idx', properties: ['pipelineId', 'createdAt', 'id'] })
@Index({ name: 'pipeline_run_commit_idx', properties: ['pipelineId', 'commit'] })
@Index({ name: 'pipeline_run_tenant_created_idx', properties: ['tenantId', 'createdAt'] })
@ObjectType({ description: 'One execution of a pipeline.' })
export class PipelineRun {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'status' | 'triggerType' | 'branch' | 'author' | 'message' | 'startedAt' | 'finishedAt' | 'durationSecs' | 'clusterId';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  pipelineId!: string;

  @Property({ type: 'uuid' })
  tenantId!: string;

  @Enum({ items: () => RunStatus, type: 'text' })
  @Field(() => RunStatus)
  status: RunStatus = RunStatus.queued;

  @Property({ type: 'text' })
  @Field()
  triggerType: string = 'manual';

  @Property({ type: 'text' })
  @Field()
  commit!: string;

  @Property({ type: 'text' })
  @Field()
  branch: string = '';

  @Property({ type: 'text' })
  @Field()
  author: string = '';

  @Property({ type: 'text' })
  @Field()
  message: string = '';

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  startedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  finishedAt: Date | null = null;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true, description: 'Seconds from start to finish, computed.' })
  durationSecs: number | null = null;

  /** Cluster the run deployed to, when it deploys. */
  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  clusterId: string | null = null;

  @OneToMany({ entity: () => StageRun, mappedBy: 'run', orderBy: { position: 'asc' } })
  stages = new Collection<StageRun>(this);

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();
}

/** One stage of a run (spec 2 StageRun). Stages are matched by name within their run. */
@Entity({ tableName: 'stage_run' })
@Index({ name: 'stage_run_run_idx', properties: ['run', 'position'] })
@ObjectType({ description: 'One stage of a pipeline run.' })
export class StageRun {
  [OptionalProps]?: 'id' | 'startedAt' | 'finishedAt' | 'errorMessage' | 'logExcerpt' | 'exitCode' | 'logUrl' | 'durationSecs';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @ManyToOne({ entity: () => PipelineRun, deleteRule: 'cascade' })
  run!: Rel<PipelineRun>;

  @Property({ type: 'integer' })
  position!: number;

  @Property({ type: 'text' })
  @Field()
  name!: string;

  @Property({ type: 'text' })
  @Field()
  status!: string;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  startedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  finishedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  errorMessage: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  logExcerpt: string | null = null;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true })
  exitCode: number | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  logUrl: string | null = null;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true })
  durationSecs: number | null = null;
}
