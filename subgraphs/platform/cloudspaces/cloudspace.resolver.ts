import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { PlatformContext } from '../runtime.js';
import { CloudSpace } from './cloudspace.entity.js';
import { CloudSpaceService, DEFAULT_QUOTA } from './cloudspace.service.js';

@InputType()
export class CreateCloudSpaceInput {
  @Field({ description: 'DNS label of at most 40 characters, unique in the tenant.' }) name!: string;
  @Field(() => ID, { nullable: true, description: 'Cluster to place it on; default: the tenant\'s own provisioned cluster, else the platform\'s.' }) clusterId?: string | null;
  @Field(() => String, { nullable: true, description: `Quota requests.cpu (default ${DEFAULT_QUOTA.cpu}).` }) cpuLimit?: string | null;
  @Field(() => String, { nullable: true, description: `Quota requests.memory (default ${DEFAULT_QUOTA.memory}).` }) memoryLimit?: string | null;
  @Field(() => Int, { nullable: true, description: `Quota pods (default ${DEFAULT_QUOTA.pods}).` }) podLimit?: number | null;
}

@InputType({ description: 'Rename or resize; omitted fields stay.' })
export class UpdateCloudSpaceInput {
  @Field(() => String, { nullable: true }) name?: string | null;
  @Field(() => String, { nullable: true }) cpuLimit?: string | null;
  @Field(() => String, { nullable: true }) memoryLimit?: string | null;
  @Field(() => Int, { nullable: true }) podLimit?: number | null;
}

@InputType()
export class CreateVirtualClusterInput {
  @Field({ description: 'DNS label of at most 40 characters, unique in the CloudSpace.' }) name!: string;
}

@ObjectType({ description: 'A virtual cluster of a CloudSpace (a Cluster API Cluster whose infrastructure is a VCluster).' })
export class VirtualCluster {
  @Field() name!: string;
  @Field({ description: 'Cluster API phase: Pending, Provisioning, Provisioned, Deleting, Failed.' }) phase!: string;
  @Field() ready!: boolean;
  @Field({ description: 'Apps go here unless they name another (tenant_cr_name).' }) isDefault!: boolean;
  @Field(() => Date, { nullable: true }) createdAt!: Date | null;
}

@ObjectType()
export class VirtualClusterKubeconfig {
  @Field() name!: string;
  @Field({ description: 'Kubeconfig YAML giving full access to the virtual cluster.' }) kubeconfig!: string;
}

const CloudSpacePage = PageOf(CloudSpace, 'CloudSpacePage');

@ArgsType()
class CloudSpaceListArgs extends PageArgs {}

const service = (ctx: PlatformContext) => new CloudSpaceService(ctx.em, ctx.identity!, ctx.platform);
const asVirtualCluster = (v: { createdAt: string | null } & Omit<VirtualCluster, 'createdAt'>): VirtualCluster => ({ ...v, createdAt: v.createdAt ? new Date(v.createdAt) : null });

@Resolver()
export class CloudSpaceResolver {
  @Authorized('read')
  @Query(() => CloudSpacePage, { description: 'CloudSpaces of the caller\'s tenant, newest first.' })
  cloudSpaces(@Args() args: CloudSpaceListArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).list(args);
  }

  @Authorized('read')
  @Query(() => CloudSpace)
  cloudSpace(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).get(id);
  }

  @Authorized('deploy')
  @Mutation(() => CloudSpace, { description: 'Saves the CloudSpace (Pending) and provisions it: namespace, quota, default virtual cluster; `cloudspace.ready` when done.' })
  createCloudSpace(@Arg('input') input: CreateCloudSpaceInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).create(input);
  }

  @Authorized('deploy')
  @Mutation(() => CloudSpace, { description: 'Rename, or resize (the quota changes at once).' })
  updateCloudSpace(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateCloudSpaceInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).update(id, input);
  }

  @Authorized('deploy')
  @Mutation(() => CloudSpace, { description: 'Deletes the CloudSpace and everything it created (status Deleting until its namespace is gone).' })
  deleteCloudSpace(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).remove(id);
  }

  @Authorized('read')
  @Query(() => [VirtualCluster])
  async virtualClusters(@Arg('cloudSpaceId', () => ID) cloudSpaceId: string, @Ctx() ctx: PlatformContext) {
    return (await service(ctx).listVirtualClusters(cloudSpaceId)).map(asVirtualCluster);
  }

  @Authorized('read')
  @Query(() => VirtualCluster)
  async virtualCluster(@Arg('cloudSpaceId', () => ID) cloudSpaceId: string, @Arg('name') name: string, @Ctx() ctx: PlatformContext) {
    return asVirtualCluster(await service(ctx).getVirtualCluster(cloudSpaceId, name));
  }

  @Authorized('deploy')
  @Mutation(() => VirtualCluster)
  async createVirtualCluster(@Arg('cloudSpaceId', () => ID) cloudSpaceId: string, @Arg('input') input: CreateVirtualClusterInput, @Ctx() ctx: PlatformContext) {
    return asVirtualCluster(await service(ctx).addVirtualCluster(cloudSpaceId, input.name));
  }

  @Authorized('deploy')
  @Mutation(() => Boolean)
  async deleteVirtualCluster(@Arg('cloudSpaceId', () => ID) cloudSpaceId: string, @Arg('name') name: string, @Ctx() ctx: PlatformContext) {
    await service(ctx).removeVirtualCluster(cloudSpaceId, name);
    return true;
  }

  @Authorized('deploy')
  @Query(() => VirtualClusterKubeconfig, { description: 'The virtual cluster\'s kubeconfig (scope deploy; every download is logged).' })
  async virtualClusterKubeconfig(@Arg('cloudSpaceId', () => ID) cloudSpaceId: string, @Arg('name') name: string, @Ctx() ctx: PlatformContext) {
    return { name, kubeconfig: await service(ctx).kubeconfig(cloudSpaceId, name) };
  }
}
