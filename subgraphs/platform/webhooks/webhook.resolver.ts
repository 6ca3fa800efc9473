import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { PlatformContext } from '../runtime.js';
import { WebhookSubscription } from './webhook.entity.js';
import { ROTATION_OVERLAP_SECS, WebhookSubscriptionService } from './webhook.service.js';

@InputType()
export class CreateWebhookSubscriptionInput {
  @Field({ description: 'HTTPS URL.' }) url!: string;
  @Field(() => [String], { nullable: true, description: 'Event types of the catalogue, or ["*"] (default) for all.' }) events?: string[] | null;
  @Field(() => [String], { nullable: true, description: 'Only events of these clusters.' }) clusterIds?: string[] | null;
  @Field(() => [String], { nullable: true, description: 'Only events of these CloudSpaces.' }) cloudspaceIds?: string[] | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Boolean, { nullable: true, description: 'Default: true.' }) enabled?: boolean | null;
}

@InputType({ description: 'Changes to a subscription; omitted fields stay. An empty id list removes that limit.' })
export class UpdateWebhookSubscriptionInput {
  @Field(() => String, { nullable: true }) url?: string | null;
  @Field(() => [String], { nullable: true }) events?: string[] | null;
  @Field(() => [String], { nullable: true }) clusterIds?: string[] | null;
  @Field(() => [String], { nullable: true }) cloudspaceIds?: string[] | null;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => Boolean, { nullable: true }) enabled?: boolean | null;
}

@InputType()
export class RotateWebhookSecretInput {
  @Field(() => Int, { nullable: true, description: `Seconds the previous secret keeps signing too; default ${ROTATION_OVERLAP_SECS.default}, at most ${ROTATION_OVERLAP_SECS.max}.` })
  overlapSecs?: number | null;
}

@ObjectType({ description: 'A subscription with its signing secret, shown only at creation and rotation.' })
export class WebhookSubscriptionWithSecret {
  @Field(() => WebhookSubscription) subscription!: WebhookSubscription;
  @Field({ description: 'Signing secret for Service-Signature. Store it now.' }) secret!: string;
}

const WebhookSubscriptionPage = PageOf(WebhookSubscription, 'WebhookSubscriptionPage');

@ArgsType()
class WebhookListArgs extends PageArgs {}

const service = (ctx: PlatformContext) => new WebhookSubscriptionService(ctx.em, ctx.identity!, ctx.platform);

@Resolver()
export class WebhookSubscriptionResolver {
  @Authorized('read')
  @Query(() => WebhookSubscriptionPage, { description: 'Webhook subscriptions of the caller\'s tenant, newest first.' })
  webhookSubscriptions(@Args() args: WebhookListArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).list(args);
  }

  @Authorized('read')
  @Query(() => WebhookSubscription)
  webhookSubscription(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).get(id);
  }

  @Authorized('deploy')
  @Mutation(() => WebhookSubscriptionWithSecret)
  createWebhookSubscription(@Arg('input') input: CreateWebhookSubscriptionInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).create(input);
  }

  @Authorized('deploy')
  @Mutation(() => WebhookSubscription)
  updateWebhookSubscription(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateWebhookSubscriptionInput, @Ctx() ctx: PlatformContext) {
    return service(ctx).update(id, input);
  }

  @Authorized('deploy')
  @Mutation(() => Boolean)
  async deleteWebhookSubscription(@Arg('id', () => ID) id: string, @Ctx() ctx: PlatformContext) {
    await service(ctx).remove(id);
    return true;
  }

  @Authorized('deploy')
  @Mutation(() => WebhookSubscriptionWithSecret, { description: 'New signing secret; the previous one also signs during the overlap window.' })
  rotateWebhookSecret(@Arg('id', () => ID) id: string, @Arg('input', () => RotateWebhookSecretInput, { nullable: true }) input: RotateWebhookSecretInput | null, @Ctx() ctx: PlatformContext) {
    return service(ctx).rotateSecret(id, input?.overlapSecs);
  }
}
