import { Arg, Authorized, Ctx, Directive, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { CloudSpace } from '../cloudspaces/cloudspace.entity.js';
import type { PlatformContext } from '../runtime.js';
import { OnboardingService } from './onboarding.service.js';

/**
 * A new tenant's progress. A federated entity: the platform answers what it owns (CloudSpaces,
 * webhooks) and the cicd subgraph adds the pipeline steps to the same object.
 */
@ObjectType({ description: 'Onboarding progress of the caller\'s tenant, derived from what exists.' })
@Directive('@key(fields: "tenantId")')
export class OnboardingChecklist {
  @Field(() => ID) tenantId!: string;
  @Field({ description: 'Always true for a caller with a tenant: the account exists.' }) account!: boolean;
  @Field() cloudspaceCreated!: boolean;
  @Field() cloudspaceReady!: boolean;
  @Field() firstWebhook!: boolean;
  @Field(() => ID, { nullable: true }) firstCloudspaceId!: string | null;
  @Field({ description: 'An app was created.' }) firstApp!: boolean;
  @Field({ description: 'An app is deployed and reachable (phase Running).' }) firstAppRunning!: boolean;
}

@InputType()
export class OnboardingProvisionInput {
  @Field(() => String, { nullable: true, description: 'Name of the first CloudSpace (default: default).' }) name?: string | null;
  @Field(() => String, { nullable: true }) cpuLimit?: string | null;
  @Field(() => String, { nullable: true }) memoryLimit?: string | null;
  @Field(() => Int, { nullable: true }) podLimit?: number | null;
}

@ObjectType()
export class OnboardingProvisionResult {
  @Field(() => CloudSpace) cloudspace!: CloudSpace;
  @Field({ description: 'False when the tenant already had a CloudSpace (nothing new was made).' }) created!: boolean;
}

const service = (ctx: PlatformContext) => new OnboardingService(ctx.em, ctx.identity!, ctx.platform);

@Resolver()
export class OnboardingResolver {
  @Authorized('deploy')
  @Mutation(() => OnboardingProvisionResult, { description: 'Provisions the tenant\'s first CloudSpace; idempotent.' })
  provisionOnboarding(@Arg('input', () => OnboardingProvisionInput, { nullable: true }) input: OnboardingProvisionInput | null, @Ctx() ctx: PlatformContext) {
    return service(ctx).provision(input ?? {});
  }

  @Authorized('read')
  @Query(() => OnboardingChecklist)
  async onboardingChecklist(@Ctx() ctx: PlatformContext): Promise<OnboardingChecklist> {
    return { ...(await service(ctx).checklist()), account: true };
  }
}
