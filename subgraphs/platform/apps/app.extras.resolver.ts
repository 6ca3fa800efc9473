import { Kind, valueFromASTUntyped, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { Arg, Args, ArgsType, Authorized, Ctx, Field, FieldResolver, Float, ID, Info, InputType, Int, Mutation, ObjectType, Query, registerEnumType, Resolver, Root } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import { KubeEvent, KubePod, PodLogLines } from '../cloudspaces/views.resolver.js';
import { DEFAULT_LOG_TAIL, MAX_LOG_TAIL } from '../cloudspaces/views.service.js';
import type { PlatformContext } from '../runtime.js';
import type { AppRevisionNote } from './app.entity.js';
import { AppExtrasService, MAX_NOTES, MAX_TAGS, SECRET_MASK, type ExportFormat } from './app.extras.service.js';
import type { Revision } from './app.revisions.js';
import { AppDeployment } from './app.resolver.js';

export enum AppExportFormat {
  yaml = 'yaml',
  json = 'json',
}

registerEnumType(AppExportFormat, { name: 'AppExportFormat', description: 'yaml or json.' });

@InputType()
class AppDeploymentTagsInput {
  @Field(() => [String], { description: `Tags to add: each 1 to 40 letters, digits, ".", "_" or "-"; a revision keeps at most ${MAX_TAGS}.` }) tags!: string[];
}

@InputType()
class AppDeploymentNotesInput {
  @Field({ description: `At most ${MAX_NOTES} characters; empty clears them.` }) notes!: string;
}

@ObjectType({ description: 'A revision\'s configuration as a document to keep: image, port, replicas, resources, environment (secret values are never exported), health check.' })
class AppDeploymentExport {
  @Field(() => AppExportFormat) format!: ExportFormat;
  @Field({ description: 'A file name for it, e.g. shop-revision-2.yaml.' }) filename!: string;
  @Field({ description: 'application/yaml or application/json.' }) contentType!: string;
  @Field({ description: 'The document. Its `config` has the shape of `PUT /apps/{id}`.' }) content!: string;
}

@ObjectType({ description: 'One field that differs between two revisions.' })
class AppDeploymentDifference {
  @Field({ description: '`image`, `port`, `env.<NAME>`, `resources.cpu_request`, `resources.memory_request` or `replicas`.' }) field!: string;
  @Field({ description: 'added, removed or changed.' }) change!: string;
  @Field(() => String, { nullable: true, description: `Value in \`from\` (null: absent there); a secret shows as \`${SECRET_MASK}\`.` }) from!: string | null;
  @Field(() => String, { nullable: true, description: `Value in \`to\` (null: absent there); a secret shows as \`${SECRET_MASK}\`.` }) to!: string | null;
}

@ObjectType({ description: 'Two revisions of an app and what differs from the first to the second.' })
class AppDeploymentComparison {
  @Field(() => AppDeployment) from!: AppDeployment;
  @Field(() => AppDeployment) to!: AppDeployment;
  @Field(() => [AppDeploymentDifference], { description: 'Empty when the two are configured alike. A secret\'s value is never shown; a change of a secret value alone cannot be seen (every revision reads the same Secret).' })
  differences!: AppDeploymentDifference[];
}

@ObjectType()
class AppContainerMetrics {
  @Field() name!: string;
  @Field(() => Float) cpuMillicores!: number;
  @Field(() => Float) memoryBytes!: number;
}

@ObjectType({ description: 'Resource use of one pod (metrics.k8s.io PodMetrics).' })
class AppPodMetrics {
  @Field() pod!: string;
  @Field(() => Float) cpuMillicores!: number;
  @Field(() => Float) memoryBytes!: number;
  @Field({ description: 'As `kubectl top` shows it, e.g. 12m.' }) cpu!: string;
  @Field({ description: 'As `kubectl top` shows it, e.g. 45Mi.' }) memory!: string;
  @Field(() => [AppContainerMetrics]) containers!: AppContainerMetrics[];
  @Field(() => Date, { nullable: true, description: 'When the sample was taken.' }) timestamp!: Date | null;
  @Field(() => String, { nullable: true, description: 'Over how long, e.g. 15s.' }) window!: string | null;
}

@ObjectType()
class AppMetricsTotals {
  @Field(() => Int, { description: 'Pods with a sample (running pods).' }) pods!: number;
  @Field(() => Float) cpuMillicores!: number;
  @Field(() => Float) memoryBytes!: number;
  @Field() cpu!: string;
  @Field() memory!: string;
}

@ObjectType({ description: 'CPU and memory use of an app\'s running pods, from its virtual cluster\'s metrics API.' })
class AppMetrics {
  @Field() vcluster!: string;
  @Field() namespace!: string;
  @Field(() => [AppPodMetrics], { description: 'By pod name.' }) pods!: AppPodMetrics[];
  @Field(() => AppMetricsTotals) totals!: AppMetricsTotals;
}

const AppPodPage = PageOf(KubePod, 'AppPodPage');
const AppEventPage = PageOf(KubeEvent, 'AppEventPage');

@ArgsType()
class AppPageArgs extends PageArgs {
  @Field(() => ID) id!: string;
}

@ArgsType()
class AppLogArgs {
  @Field(() => ID) id!: string;
  @Field(() => String, { nullable: true, description: 'One of the app\'s pods; default: its newest ready pod, else its newest pod.' }) pod?: string | null;
  @Field(() => String, { nullable: true, description: 'Default: the pod\'s default container, else its first.' }) container?: string | null;
  @Field(() => Int, { nullable: true, description: `Lines from the end, 0 to ${MAX_LOG_TAIL}; default ${DEFAULT_LOG_TAIL}.` }) tail?: number | null;
  @Field(() => Int, { nullable: true, description: 'Only lines of the last this many seconds.' }) sinceSeconds?: number | null;
  @Field(() => Boolean, { nullable: true, description: 'Prefix each line with its RFC 3339 time.' }) timestamps?: boolean | null;
}

/** What the field resolvers below get: a revision, maybe with its app and its tags and notes already known. */
type DeploymentRoot = Omit<Revision, 'createdAt'> & { createdAt: Date | null; appId?: string; tags?: string[]; notes?: string };

const service = (ctx: PlatformContext) => new AppExtrasService(ctx.em, ctx.identity!, ctx.platform);
const asDeployment = (r: Revision & { appId?: string; tags?: string[]; notes?: string }): DeploymentRoot => ({ ...r, createdAt: r.createdAt ? new Date(r.createdAt) : null });

/** Notes of an app loaded once per request, however many revisions ask. */
const notesCache = new WeakMap<object, Map<string, Promise<Map<number, AppRevisionNote>>>>();

function notesFor(ctx: PlatformContext, appId: string): Promise<Map<number, AppRevisionNote>> {
  let byApp = notesCache.get(ctx);
  if (!byApp) notesCache.set(ctx, (byApp = new Map()));
  let notes = byApp.get(appId);
  if (!notes) byApp.set(appId, (notes = service(ctx).notesOf(appId)));
  return notes;
}

function rootField(selections: SelectionSetNode, key: string | number, fragments: Record<string, FragmentDefinitionNode>): FieldNode | undefined {
  for (const s of selections.selections) {
    if (s.kind === Kind.FIELD && (s.alias?.value ?? s.name.value) === key) return s;
    const inner = s.kind === Kind.INLINE_FRAGMENT ? s.selectionSet : s.kind === Kind.FRAGMENT_SPREAD ? fragments[s.name.value]?.selectionSet : undefined;
    const found = inner ? rootField(inner, key, fragments) : undefined;
    if (found) return found;
  }
  return undefined;
}

/**
 * The app a revision of `appDeployments(id:)` belongs to: the list's items are revisions read
 * from the cluster and do not carry it, so it is the `id` argument of the root field they are under.
 */
function listedAppId(info: GraphQLResolveInfo): string | undefined {
  let path = info.path;
  while (path.prev) path = path.prev;
  const field = rootField(info.operation.selectionSet, path.key, info.fragments);
  if (field?.name.value !== 'appDeployments') return undefined;
  const argument = field.arguments?.find((a) => a.name.value === 'id');
  const value = argument ? valueFromASTUntyped(argument.value, info.variableValues) : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Spec 4.1 around an app: one revision, its export, tags and notes, comparisons; the app's pods, events, metrics and logs. */
@Resolver(() => AppDeployment)
export class AppExtrasResolver {
  @FieldResolver(() => [String], { description: 'Labels given to this revision (POST …/deployments/{id}/tags).' })
  async tags(@Root() root: DeploymentRoot, @Ctx() ctx: PlatformContext, @Info() info: GraphQLResolveInfo): Promise<string[]> {
    if (root.tags) return root.tags;
    const appId = root.appId ?? listedAppId(info);
    return appId ? ((await notesFor(ctx, appId)).get(root.revision)?.tags ?? []) : [];
  }

  @FieldResolver(() => String, { description: 'Free-text notes on this revision (PUT …/deployments/{id}/notes); empty when none.' })
  async notes(@Root() root: DeploymentRoot, @Ctx() ctx: PlatformContext, @Info() info: GraphQLResolveInfo): Promise<string> {
    if (root.notes !== undefined) return root.notes;
    const appId = root.appId ?? listedAppId(info);
    return appId ? ((await notesFor(ctx, appId)).get(root.revision)?.notes ?? '') : '';
  }

  @Authorized('read')
  @Query(() => AppDeployment, { description: 'One revision of an app, by deployment id (its ReplicaSet\'s name) or revision number, with its tags and notes.' })
  async appDeployment(@Arg('id', () => ID) id: string, @Arg('deploymentId') deploymentId: string, @Ctx() ctx: PlatformContext) {
    return asDeployment(await service(ctx).deployment(id, deploymentId));
  }

  @Authorized('read')
  @Query(() => AppDeploymentExport, { description: 'A revision\'s configuration as a YAML or JSON document (secret values are never exported).' })
  appDeploymentExport(
    @Arg('id', () => ID) id: string,
    @Arg('deploymentId') deploymentId: string,
    @Arg('format', () => AppExportFormat, { nullable: true, defaultValue: AppExportFormat.yaml }) format: AppExportFormat | null,
    @Ctx() ctx: PlatformContext,
  ) {
    return service(ctx).exportRevision(id, deploymentId, format);
  }

  @Authorized('read')
  @Query(() => AppDeploymentComparison, { description: 'What differs from one revision of an app to another (revision numbers or deployment ids).' })
  async appDeploymentComparison(
    @Arg('id', () => ID) id: string,
    @Arg('from', () => String, { nullable: true }) from: string | null,
    @Arg('to', () => String, { nullable: true }) to: string | null,
    @Ctx() ctx: PlatformContext,
  ) {
    const comparison = await service(ctx).compare(id, from, to);
    return { from: asDeployment({ ...comparison.from, appId: id }), to: asDeployment({ ...comparison.to, appId: id }), differences: comparison.differences };
  }

  @Authorized('deploy')
  @Mutation(() => AppDeployment, { description: 'Adds tags to a revision (kept once each; at most 20).' })
  async addAppDeploymentTags(@Arg('id', () => ID) id: string, @Arg('deploymentId') deploymentId: string, @Arg('input') input: AppDeploymentTagsInput, @Ctx() ctx: PlatformContext) {
    return asDeployment(await service(ctx).addTags(id, deploymentId, input.tags));
  }

  @Authorized('deploy')
  @Mutation(() => AppDeployment, { description: 'Replaces a revision\'s notes.' })
  async setAppDeploymentNotes(@Arg('id', () => ID) id: string, @Arg('deploymentId') deploymentId: string, @Arg('input') input: AppDeploymentNotesInput, @Ctx() ctx: PlatformContext) {
    return asDeployment(await service(ctx).setNotes(id, deploymentId, input.notes));
  }

  @Authorized('read')
  @Query(() => AppPodPage, { description: 'The app\'s pods in its virtual cluster, by name.' })
  appPods(@Args() args: AppPageArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).pods(args.id, args);
  }

  @Authorized('read')
  @Query(() => AppEventPage, { description: 'Events about the app\'s Deployment, ReplicaSets and pods, oldest first by last occurrence.' })
  appEvents(@Args() args: AppPageArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).events(args.id, args);
  }

  @Authorized('read')
  @Query(() => AppMetrics, { description: 'CPU and memory use of the app\'s running pods (metrics.k8s.io), per pod and in total.' })
  appMetrics(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).metrics(id);
  }

  @Authorized('read')
  @Query(() => PodLogLines, { description: 'The last lines of the log of one of the app\'s pods. Following it is a stream: the REST route with `follow=true`.' })
  appLogs(@Args() args: AppLogArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).logs(args.id, args);
  }
}
