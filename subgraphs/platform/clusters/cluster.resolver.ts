import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, InputType, Int, Mutation, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { PlatformContext } from '../runtime.js';
import { Cluster } from './cluster.entity.js';
import { ClusterService } from './cluster.service.js';

@InputType({ description: 'Connect an existing cluster (give `kubeconfig`) or create one through Cluster API (give the infrastructure, or nothing for the defaults).' })
export class CreateClusterInput {
  @Field({ description: 'DNS label, unique in the tenant.' }) name!: string;
  @Field(() => String, { nullable: true, description: 'Kubeconfig (YAML or JSON) of an existing cluster; its API must answer. Stored encrypted.' }) kubeconfig?: string | null;
  @Field(() => String, { nullable: true, description: 'Cluster API infrastructure kind: DockerCluster (default), AWSCluster, AzureCluster, GCPCluster.' }) infrastructureKind?: string | null;
  @Field(() => String, { nullable: true, description: 'Kubernetes version of a created cluster, e.g. v1.30.0 (default).' }) kubernetesVersion?: string | null;
  @Field(() => Int, { nullable: true, description: 'Worker nodes of a created cluster (default 3).' }) workerNodes?: number | null;
}

@InputType()
export class RegisterSelfClusterInput {
  @Field(() => String, { nullable: true, description: 'Default: management.' }) name?: string | null;
}

const ClusterPage = PageOf(Cluster, 'ClusterPage');

@ArgsType()
class ClusterListArgs extends PageArgs {}

const service = (ctx: PlatformContext) => new ClusterService(ctx.em, ctx.identity!, ctx.platform);

@Resolver()
export class ClusterResolver {
  @Authorized('read')
  @Query(() => ClusterPage, { description: 'Clusters of the caller\'s tenant, newest first (platform administrators: all).' })
  clusters(@Args() args: ClusterListArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).list(args);
  }

  @Authorized('read')
  @Query(() => Cluster, { description: 'One cluster, with live node counts.' })
  cluster(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).detail(id);
  }

  @Authorized('admin')
  @Mutation(() => Cluster, { description: 'Connects an existing cluster or creates one through Cluster API. Notifies workflow-manager.' })
  createCluster(@Arg('input') input: CreateClusterInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).create(input);
  }

  @Authorized('admin', 'role:super_admin')
  @Mutation(() => Cluster, { description: 'Registers the management cluster the platform runs on (once; platform administrators).' })
  registerSelfCluster(@Arg('input', () => RegisterSelfClusterInput, { nullable: true }) input: RegisterSelfClusterInput | null, @Ctx() ctx: PlatformContext) {
    return service(ctx).registerSelf(input?.name ?? undefined);
  }

  @Authorized('admin')
  @Mutation(() => Cluster, { description: 'Disconnects a connected cluster, or deletes a created one (phase Deleting until Cluster API has removed it).' })
  deleteCluster(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).remove(id);
  }
}
