import { Arg, Args, ArgsType, Authorized, Ctx, Field, FieldResolver, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { PlatformContext } from '../runtime.js';
import { App, AppPhase } from './app.entity.js';
import { APP_NAMESPACE, LABELS } from './app.render.js';
import { listRevisions, revisionNumber, type Revision } from './app.revisions.js';
import { AppService, maskedEnv } from './app.service.js';
import { deployStatus } from './app.status.js';

export const APP_STATUS_CHANGED = 'APP_STATUS_CHANGED';

@InputType()
class AppSourceInput {
  @Field({ description: 'Only `image` for now.' }) type!: string;
  @Field(() => String, { nullable: true, description: 'Image reference, e.g. nginx:1.27.' }) image?: string | null;
}

@InputType()
class AppResourcesInput {
  @Field(() => String, { nullable: true, description: 'Kubernetes quantity, e.g. 250m (default 100m).' }) cpuRequest?: string | null;
  @Field(() => String, { nullable: true, description: 'Kubernetes quantity, e.g. 256Mi (default 128Mi).' }) memoryRequest?: string | null;
}

@InputType()
class AutoscalingInput {
  @Field(() => Int) minReplicas!: number;
  @Field(() => Int) maxReplicas!: number;
  @Field(() => Int, { nullable: true, description: 'Default 80.' }) targetCpuPercent?: number | null;
}

@InputType()
class EnvVarInput {
  @Field() name!: string;
  @Field() value!: string;
  @Field(() => Boolean, { nullable: true, description: 'Write-only: stored encrypted, kept out of Git, masked on read.' }) secret?: boolean | null;
}

@InputType()
class HealthCheckInput {
  @Field() path!: string;
  @Field(() => Int, { nullable: true, description: 'Default: the app port.' }) port?: number | null;
  @Field(() => Int, { nullable: true, description: 'Default 5.' }) initialDelaySecs?: number | null;
  @Field(() => Int, { nullable: true, description: 'Default 10.' }) periodSecs?: number | null;
}

@InputType({ description: 'Everything about an app, in one request.' })
export class CreateAppInput {
  @Field({ description: 'DNS label of at most 40 characters, unique in the CloudSpace.' }) name!: string;
  @Field(() => ID, { nullable: true, description: 'Required unless given as the cloudspaceId argument.' }) cloudspaceId?: string | null;
  @Field(() => AppSourceInput) source!: AppSourceInput;
  @Field(() => Int) port!: number;
  @Field(() => AppResourcesInput, { nullable: true }) resources?: AppResourcesInput | null;
  @Field(() => Boolean, { nullable: true, description: 'HTTPS through cert-manager (default true).' }) tls?: boolean | null;
  @Field(() => String, { nullable: true, description: 'Virtual cluster to run in; default: the CloudSpace\'s.' }) tenantCrName?: string | null;
  @Field(() => String, { nullable: true, description: 'Custom domain (the address then).' }) domain?: string | null;
  @Field(() => Int, { nullable: true, description: 'Default 1 (autoscaling: its minimum).' }) replicas?: number | null;
  @Field(() => AutoscalingInput, { nullable: true }) autoscaling?: AutoscalingInput | null;
  @Field(() => [EnvVarInput], { nullable: true }) env?: EnvVarInput[] | null;
  @Field(() => HealthCheckInput, { nullable: true }) healthCheck?: HealthCheckInput | null;
  @Field(() => String, { nullable: true, deprecationReason: 'Ignored: the platform computes the address.' }) address?: string | null;
}

@InputType({ description: 'The app\'s configuration; omitted fields stay. The name and CloudSpace cannot change.' })
export class UpdateAppInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => AppSourceInput, { nullable: true }) source?: AppSourceInput | null;
  @Field(() => Int, { nullable: true }) port?: number | null;
  @Field(() => AppResourcesInput, { nullable: true }) resources?: AppResourcesInput | null;
  @Field(() => Boolean, { nullable: true }) tls?: boolean | null;
  @Field(() => String, { nullable: true }) domain?: string | null;
  @Field(() => Int, { nullable: true }) replicas?: number | null;
  @Field(() => AutoscalingInput, { nullable: true }) autoscaling?: AutoscalingInput | null;
  @Field(() => [EnvVarInput], { nullable: true }) env?: EnvVarInput[] | null;
  @Field(() => HealthCheckInput, { nullable: true }) healthCheck?: HealthCheckInput | null;
}

@InputType()
class ScaleInput {
  @Field(() => Int) replicas!: number;
}

@InputType()
class RollbackInput {
  @Field(() => Int, { nullable: true }) revision?: number | null;
  @Field(() => String, { nullable: true, description: 'A deployment id (from GET /deployments) instead of a revision number.' }) deploymentId?: string | null;
}

@InputType()
class DomainInput {
  @Field(() => String, { nullable: true, description: 'Custom domain, or null for the platform address.' }) domain?: string | null;
}

@InputType()
class EnvVarsInput {
  @Field(() => [EnvVarInput]) env!: EnvVarInput[];
}

@ObjectType()
export class EnvVar {
  @Field() name!: string;
  @Field(() => String, { nullable: true, description: 'Null for secret values (write-only).' }) value!: string | null;
  @Field() secret!: boolean;
}

@ObjectType()
class AppResources {
  @Field(() => String, { nullable: true }) cpuRequest!: string | null;
  @Field(() => String, { nullable: true }) memoryRequest!: string | null;
}

@ObjectType()
class AutoscalingView {
  @Field(() => Int) minReplicas!: number;
  @Field(() => Int) maxReplicas!: number;
  @Field(() => Int) targetCpuPercent!: number;
}

@ObjectType()
class HealthCheckView {
  @Field() path!: string;
  @Field(() => Int) port!: number;
  @Field(() => Int) initialDelaySecs!: number;
  @Field(() => Int) periodSecs!: number;
}

@ObjectType({ description: 'Spec 3: the checks in order — GitOps sync, workload readiness, HTTPS reachability.' })
export class DeployStatusView {
  @Field(() => AppPhase, { description: 'Pending, Syncing, Deploying, Verifying (ready, not reachable yet), Running (reachable), Failed, Stopped, Deleting.' }) phase!: AppPhase;
  @Field({ description: 'Synced (the latest commit is applied), OutOfSync, Unknown.' }) gitops!: string;
  @Field(() => Int) readyReplicas!: number;
  @Field(() => Int) desiredReplicas!: number;
  @Field({ description: 'True only when an HTTPS request to the address succeeded.' }) reachable!: boolean;
  @Field(() => Int, { nullable: true, description: 'Running revision (ReplicaSet revision).' }) revision!: number | null;
  @Field(() => String, { nullable: true, description: 'Fleet commit of the desired state.' }) commit!: string | null;
  @Field(() => String, { nullable: true, description: 'Commit the GitOps controller last applied.' }) appliedRevision!: string | null;
  @Field(() => String, { nullable: true, description: 'image_pull, crash_loop or progress_deadline.' }) failure!: string | null;
  @Field() message!: string;
}

@ObjectType({ description: 'What runs now: the app\'s Deployment in its virtual cluster, read live.' })
export class AppWorkload {
  @Field(() => Int, { description: 'Replicas the Deployment asks for now (0 while stopped).' }) replicas!: number;
  @Field(() => Int) readyReplicas!: number;
  @Field(() => Int, { description: 'Replicas running the current revision.' }) updatedReplicas!: number;
  @Field(() => Int) availableReplicas!: number;
  @Field(() => Int, { nullable: true, description: 'The current ReplicaSet revision.' }) revision!: number | null;
}

@ObjectType({ description: 'A revision: what a ReplicaSet in the virtual cluster ran.' })
export class AppDeployment {
  @Field(() => ID, { description: 'The ReplicaSet name.' }) id!: string;
  @Field(() => Int) revision!: number;
  @Field() image!: string;
  @Field(() => Int, { nullable: true }) port!: number | null;
  @Field(() => [EnvVar]) env!: EnvVar[];
  @Field(() => AppResources) resources!: AppResources;
  @Field(() => Int) replicas!: number;
  @Field(() => Int) readyReplicas!: number;
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
  @Field() current!: boolean;
}

@ObjectType()
class RollbackResult {
  @Field(() => App) app!: App;
  @Field(() => Int, { description: 'The revision whose configuration is now desired state; a new revision records the rollback once applied.' }) rolledBackTo!: number;
}

const AppPage = PageOf(App, 'AppPage');

@ArgsType()
class AppListArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Only apps of this CloudSpace.' }) cloudspaceId?: string | null;
}

const service = (ctx: PlatformContext) => new AppService(ctx.em, ctx.identity!, ctx.platform);

/** Per request: the app Deployments of each virtual cluster, listed once (a page of apps reads each cluster once). */
const workloads = new WeakMap<PlatformContext, Map<string, Promise<Map<string, AppWorkload>>>>();

async function workloadOf(ctx: PlatformContext, app: App): Promise<AppWorkload | null> {
  let byCluster = workloads.get(ctx);
  if (!byCluster) workloads.set(ctx, (byCluster = new Map()));
  const key = `${app.cloudspaceId}/${app.vcluster}`;
  let listed = byCluster.get(key);
  if (!listed) {
    listed = service(ctx)
      .inVirtualCluster(app, async (clients) => (await clients.apps.listNamespacedDeployment({ namespace: APP_NAMESPACE, labelSelector: LABELS.appId })).items)
      .then((items) => {
        const found = new Map<string, AppWorkload>();
        for (const d of items) {
          const id = d.metadata?.labels?.[LABELS.appId];
          if (id) {
            found.set(id, {
              replicas: d.spec?.replicas ?? 0,
              readyReplicas: d.status?.readyReplicas ?? 0,
              updatedReplicas: d.status?.updatedReplicas ?? 0,
              availableReplicas: d.status?.availableReplicas ?? 0,
              revision: revisionNumber(d),
            });
          }
        }
        return found;
      })
      // No Kubernetes, an unreachable virtual cluster: the app's stored state is still the answer.
      .catch(() => new Map<string, AppWorkload>());
    byCluster.set(key, listed);
  }
  return (await listed).get(app.id) ?? null;
}
const asDeployment = (r: Revision): AppDeployment => ({ ...r, createdAt: r.createdAt ? new Date(r.createdAt) : null });

@Resolver(() => App)
export class AppResolver {
  @FieldResolver(() => [EnvVar], { description: 'Secret values are masked (null).' })
  env(@Root() app: App): EnvVar[] {
    return maskedEnv(app.env);
  }

  @FieldResolver(() => AppResources)
  resources(@Root() app: App): AppResources {
    return { cpuRequest: app.cpuRequest, memoryRequest: app.memoryRequest };
  }

  @FieldResolver(() => AutoscalingView, { nullable: true })
  autoscaling(@Root() app: App) {
    return app.autoscaling;
  }

  @FieldResolver(() => HealthCheckView, { nullable: true })
  healthCheck(@Root() app: App) {
    return app.healthCheck;
  }

  @FieldResolver(() => AppWorkload, {
    nullable: true,
    description: 'Live from the virtual cluster (one read per virtual cluster and request, however many apps): null before the GitOps controller applied the app, or while its virtual cluster does not answer.',
  })
  workload(@Root() app: App, @Ctx() ctx: PlatformContext): Promise<AppWorkload | null> {
    return workloadOf(ctx, app);
  }

  @FieldResolver(() => Int, { nullable: true, description: 'Replicas start restores (set while stopped).' })
  stoppedReplicas(@Root() app: App) {
    return app.stoppedReplicas;
  }

  @Authorized('read')
  @Query(() => AppPage, { description: 'Apps of the caller\'s tenant, newest first.' })
  apps(@Args() args: AppListArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).list(args);
  }

  @Authorized('read')
  @Query(() => App)
  app(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).get(id);
  }

  @Authorized('read')
  @Query(() => DeployStatusView)
  async appDeployStatus(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext): Promise<DeployStatusView> {
    const s = service(ctx);
    const app = await s.get(id);
    const { checker, fleet } = ctx.platform;
    if (!checker || !fleet) throw new AppError(ErrorCodes.upstreamUnavailable, 'GitOps is not configured (FLUX_GIT_URL, KUBECONFIG)');
    return deployStatus(s, app, checker, (commit, revision) => fleet.isAncestor(commit, revision));
  }

  @Authorized('read')
  @Query(() => [AppDeployment], { description: 'Revisions newest first, from the ReplicaSets of the virtual cluster.' })
  async appDeployments(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    const s = service(ctx);
    return (await listRevisions(s, await s.get(id))).map(asDeployment);
  }

  @Authorized('deploy')
  @Mutation(() => App, { description: 'Creates an app in one atomic request; its PlatformApp resource follows through the outbox.' })
  createApp(
    @Arg('input') input: CreateAppInput,
    @Arg('cloudspaceId', () => ID, { nullable: true, description: 'The CloudSpace, when not in the input (the CloudSpace-scoped routes).' }) cloudspaceId: string | null,
    @Ctx() ctx: PlatformContext,
  ) {
    if (cloudspaceId && input.cloudspaceId && cloudspaceId !== input.cloudspaceId) throw new AppError(ErrorCodes.validationFailed, 'cloudspace_id differs from the CloudSpace of the path');
    return service(ctx).create({ ...input, cloudspaceId: cloudspaceId ?? input.cloudspaceId ?? null });
  }

  @Authorized('deploy')
  @Mutation(() => App)
  updateApp(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateAppInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).update(id, input);
  }

  @Authorized('deploy')
  @Mutation(() => App)
  updateAppDomain(@Arg('id', () => ID) id: string, @Arg('input') input: DomainInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).updateDomain(id, input.domain ?? null);
  }

  @Authorized('deploy')
  @Mutation(() => App)
  updateAppEnv(@Arg('id', () => ID) id: string, @Arg('input') input: EnvVarsInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).updateEnv(id, input.env);
  }

  @Authorized('deploy')
  @Mutation(() => App, { description: 'Deletes the app: its resource, its folder in Git, what it created; emits app.deleted.' })
  deleteApp(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).remove(id);
  }

  @Authorized('deploy')
  @Mutation(() => App, { description: 'Takes effect in the virtual cluster now and is committed to Git at once.' })
  scaleApp(@Arg('id', () => ID) id: string, @Arg('input') input: ScaleInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).scale(id, input.replicas);
  }

  @Authorized('deploy')
  @Mutation(() => App)
  restartApp(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).restart(id);
  }

  @Authorized('deploy')
  @Mutation(() => App, { description: 'Scales to zero, remembering the replica count for start.' })
  stopApp(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).stop(id);
  }

  @Authorized('deploy')
  @Mutation(() => App)
  startApp(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).start(id);
  }

  @Authorized('deploy')
  @Mutation(() => RollbackResult)
  async rollbackApp(@Arg('id', () => ID) id: string, @Arg('input') input: RollbackInput, @Ctx() ctx: PlatformContext): Promise<RollbackResult> {
    if ((input.revision === null || input.revision === undefined) && !input.deploymentId) throw new AppError(ErrorCodes.validationFailed, 'give revision or deployment_id');
    const { app, revision } = await service(ctx).rollback(id, input);
    return { app, rolledBackTo: revision };
  }

  @Authorized('read')
  @Subscription(() => App, {
    topics: APP_STATUS_CHANGED,
    filter: ({ payload, args, context }: { payload: App; args: { appId: string }; context: PlatformContext }) => payload.id === args.appId && payload.tenantId === context.identity?.tenantId,
    description: 'The app each time its phase or message changes.',
  })
  appStatusChanged(@Arg('appId', () => ID) _appId: string, @Root() app: App): App {
    return app;
  }
}

export { AppPhase };
