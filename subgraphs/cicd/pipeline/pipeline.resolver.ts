import { Arg, Args, ArgsType, Authorized, Ctx, Field, Float, FieldResolver, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { AppError, ErrorCodes, isUuid } from '../../../kernel/errors.js';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { SubgraphContext } from '../../../kernel/graphql/subgraph.js';
import { PipelineRun, RunStatus, StageRun } from '../run/run.entity.js';
import { RunReportService } from '../run/report.service.js';
import { RUN_UPDATED, type CicdContext, type RunUpdate } from '../runtime.js';
import { WebhookService } from '../webhook/webhook.service.js';
import { Pipeline, PipelineProvider, TriggerEvent } from './pipeline.entity.js';
import { PipelineService } from './pipeline.service.js';

@InputType()
export class CreatePipelineInput {
  @Field() name!: string;
  @Field({ description: 'Repository as the Git host names it: owner/name.' }) repository!: string;
  @Field(() => String, { nullable: true, description: 'Default: main.' }) branch?: string | null;
  @Field(() => PipelineProvider) provider!: PipelineProvider;
  @Field(() => [TriggerEvent], { nullable: true, description: 'Default: push, manual.' }) triggerEvents?: TriggerEvent[] | null;
  @Field(() => String, { nullable: true, description: 'Cluster a successful run deploys to.' }) deployClusterId?: string | null;
}

@InputType({ description: 'Changes to a pipeline; omitted fields stay.' })
export class UpdatePipelineInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) repository?: string | null;
  @Field(() => String, { nullable: true }) branch?: string | null;
  @Field(() => PipelineProvider, { nullable: true }) provider?: PipelineProvider | null;
  @Field(() => [TriggerEvent], { nullable: true }) triggerEvents?: TriggerEvent[] | null;
  @Field(() => String, { nullable: true }) deployClusterId?: string | null;
}

@InputType({ description: 'One stage of a run report (StageRun fields); stages are matched by name.' })
export class StageReportInput {
  @Field() name!: string;
  @Field() status!: string;
  @Field(() => Date, { nullable: true }) startedAt?: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt?: Date | null;
  @Field(() => String, { nullable: true }) errorMessage?: string | null;
  @Field(() => String, { nullable: true }) logExcerpt?: string | null;
  @Field(() => Int, { nullable: true }) exitCode?: number | null;
  @Field(() => String, { nullable: true }) logUrl?: string | null;
  @Field(() => Int, { nullable: true, description: 'Computed from started/finished when omitted.' }) durationSecs?: number | null;
}

@InputType({ description: 'A run reported by CI with the pipeline\'s reporting token.' })
export class CreateRunInput {
  @Field(() => RunStatus, { nullable: true, description: 'Default: queued.' }) status?: RunStatus | null;
  @Field(() => String, { nullable: true, description: 'push, pull_request, manual, schedule, ...; default manual.' }) triggerType?: string | null;
  @Field() commit!: string;
  @Field(() => String, { nullable: true }) branch?: string | null;
  @Field(() => String, { nullable: true }) author?: string | null;
  @Field(() => String, { nullable: true }) message?: string | null;
  @Field(() => Date, { nullable: true }) startedAt?: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt?: Date | null;
  @Field(() => String, { nullable: true, description: 'Cluster this run deploys to (publishes cicd.{provider}.deployed on success).' }) clusterId?: string | null;
  @Field(() => [StageReportInput], { nullable: true }) stages?: StageReportInput[] | null;
}

@InputType({ description: 'The run report (spec 2): status, finished_at and stages.' })
export class RunReportInput {
  @Field(() => RunStatus, { nullable: true }) status?: RunStatus | null;
  @Field(() => Date, { nullable: true }) startedAt?: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt?: Date | null;
  @Field(() => String, { nullable: true }) clusterId?: string | null;
  @Field(() => [StageReportInput], { nullable: true }) stages?: StageReportInput[] | null;
}

@InputType({ description: 'An inbound Git-host webhook as the edge received it.' })
export class GitWebhookInput {
  @Field(() => PipelineProvider) provider!: PipelineProvider;
  @Field({ description: 'The raw request body.' }) payload!: string;
  @Field(() => String, { nullable: true }) signature?: string | null;
  @Field(() => String, { nullable: true }) token?: string | null;
  @Field(() => String, { nullable: true }) event?: string | null;
  @Field(() => String, { nullable: true }) deliveryId?: string | null;
}

@ObjectType({ description: 'A pipeline with its secrets, shown only at creation and rotation.' })
export class PipelineWithSecrets {
  @Field(() => Pipeline) pipeline!: Pipeline;
  @Field({ description: 'Signs host_a webhooks (X-Hub-Signature-256) / is host_b\'s X-Git-Token.' }) webhookSecret!: string;
  @Field({ description: 'X-Pipeline-Token for run reports.' }) reportingToken!: string;
  @Field(() => String, { nullable: true, description: 'Where the Git host should post (null for generic CI).' }) webhookUrl!: string | null;
}

@ObjectType({ description: 'Runs of the last 7 days.' })
export class RunSummaryType {
  @Field(() => Int) runs!: number;
  @Field(() => Int) succeeded!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) cancelled!: number;
  @Field(() => Int) inProgress!: number;
  @Field(() => Float, { nullable: true, description: 'Succeeded over finished runs (0..1); null when none finished.' }) successRate!: number | null;
  @Field(() => Float, { nullable: true, description: 'Mean duration of finished runs, in seconds.' }) averageDurationSecs!: number | null;
  @Field() since!: Date;
}

@ObjectType()
export class WebhookRun {
  @Field(() => ID) pipelineId!: string;
  @Field(() => ID) runId!: string;
  @Field(() => RunStatus) status!: RunStatus;
}

@ObjectType({ description: 'What a webhook delivery did: recorded, ignored (with the reason) or duplicate.' })
export class WebhookReceiptType {
  @Field() outcome!: string;
  @Field() event!: string;
  @Field(() => String, { nullable: true }) reason!: string | null;
  @Field(() => [WebhookRun]) runs!: WebhookRun[];
}

const PipelinePage = PageOf(Pipeline, 'PipelinePage');
const PipelineRunPage = PageOf(PipelineRun, 'PipelineRunPage');

@ArgsType()
class PipelineListArgs extends PageArgs {}

@ArgsType()
class RunListArgs extends PageArgs {
  @Field(() => ID) pipelineId!: string;
}

const pipelines = (ctx: CicdContext) => new PipelineService(ctx.em, ctx.identity!, ctx.cicd);

@Resolver(() => Pipeline)
export class PipelineResolver {
  @FieldResolver(() => String, { nullable: true, description: 'Where the Git host should post its webhooks.' })
  webhookUrl(@Root() pipeline: Pipeline, @Ctx() ctx: CicdContext): string | null {
    return pipeline.provider === PipelineProvider.generic ? null : `${ctx.cicd.config.publicUrl}/cicd/webhook/${pipeline.provider}`;
  }

  @Authorized('read')
  @Query(() => PipelinePage, { description: 'Pipelines of the caller\'s tenant, newest first.' })
  pipelines(@Args() args: PipelineListArgs, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).list(args);
  }

  @Authorized('read')
  @Query(() => Pipeline)
  pipeline(@Arg('id', () => ID) id: string, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).get(id);
  }

  @Authorized('read')
  @Query(() => PipelineRunPage, { description: 'Runs of a pipeline, newest first.' })
  pipelineRuns(@Args() args: RunListArgs, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).runs(args.pipelineId, args);
  }

  @Authorized('read')
  @Query(() => PipelineRun, { description: 'The newest run of a commit.' })
  pipelineRunByCommit(@Arg('pipelineId', () => ID) pipelineId: string, @Arg('commit') commit: string, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).findRun(pipelineId, commit);
  }

  @Authorized('read')
  @Query(() => RunSummaryType, { description: 'All pipelines of the tenant, last 7 days.' })
  pipelinesSummary(@Ctx() ctx: CicdContext) {
    return pipelines(ctx).summary();
  }

  @Authorized('read')
  @Query(() => RunSummaryType, { description: 'One pipeline, last 7 days.' })
  pipelineRunsSummary(@Arg('pipelineId', () => ID) pipelineId: string, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).summary(pipelineId);
  }

  @Authorized('deploy')
  @Mutation(() => PipelineWithSecrets)
  createPipeline(@Arg('input') input: CreatePipelineInput, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).create(input);
  }

  @Authorized('deploy')
  @Mutation(() => Pipeline)
  updatePipeline(@Arg('id', () => ID) id: string, @Arg('input') input: UpdatePipelineInput, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).update(id, input);
  }

  @Authorized('deploy')
  @Mutation(() => Boolean)
  async deletePipeline(@Arg('id', () => ID) id: string, @Ctx() ctx: CicdContext) {
    await pipelines(ctx).remove(id);
    return true;
  }

  @Authorized('deploy')
  @Mutation(() => PipelineWithSecrets, { description: 'New webhook secret and reporting token; the old ones stop working at once.' })
  rotatePipelineSecrets(@Arg('id', () => ID) id: string, @Ctx() ctx: CicdContext) {
    return pipelines(ctx).rotateSecrets(id);
  }

  @Mutation(() => PipelineRun, { description: 'Authenticated by the pipeline\'s reporting token (X-Pipeline-Token).' })
  reportPipelineRun(@Arg('pipelineId', () => ID) pipelineId: string, @Arg('token') token: string, @Arg('input') input: CreateRunInput, @Ctx() ctx: CicdContext) {
    return new RunReportService(ctx.em, ctx.cicd).create(pipelineId, token, input);
  }

  @Mutation(() => PipelineRun, { description: 'Authenticated by the pipeline\'s reporting token (X-Pipeline-Token).' })
  updatePipelineRun(@Arg('runId', () => ID) runId: string, @Arg('token') token: string, @Arg('input') input: RunReportInput, @Ctx() ctx: CicdContext) {
    return new RunReportService(ctx.em, ctx.cicd).update(runId, token, input);
  }

  @Mutation(() => WebhookReceiptType, { description: 'Inbound Git-host webhook, verified by the pipeline\'s secret.' })
  receiveGitWebhook(@Arg('input') input: GitWebhookInput, @Ctx() ctx: CicdContext) {
    return new WebhookService(ctx.em, ctx.cicd).receive(input);
  }

  @Authorized('read')
  @Subscription(() => PipelineRun, {
    topics: RUN_UPDATED,
    filter: ({ payload, args, context }: { payload: RunUpdate; args: { pipelineId: string }; context: SubgraphContext }) =>
      payload.pipelineId === args.pipelineId && (context.identity?.tenantId === payload.tenantId || (context.identity?.tenantId === null && context.identity.roles.includes('super_admin'))),
    description: 'Runs of a pipeline as they are created and change.',
  })
  async pipelineRunUpdated(@Root() update: RunUpdate, @Arg('pipelineId', () => ID) pipelineId: string, @Ctx() ctx: CicdContext): Promise<PipelineRun> {
    if (!isUuid(pipelineId)) throw new AppError(ErrorCodes.notFound, 'pipeline not found');
    // A fresh unit of work per event: the connection's entity manager would serve stale rows.
    return ctx.em.fork().findOneOrFail(PipelineRun, { id: update.runId }, { filters: false, populate: ['stages'] });
  }
}

@Resolver(() => PipelineRun)
export class PipelineRunResolver {
  @FieldResolver(() => [StageRun])
  async stages(@Root() run: PipelineRun): Promise<StageRun[]> {
    if (!run.stages.isInitialized()) await run.stages.init();
    return run.stages.getItems();
  }
}
