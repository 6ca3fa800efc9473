import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, Mutation, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { PlatformContext } from '../runtime.js';
import { DeliveryStatus, WebhookDelivery } from './delivery.entity.js';
import { WebhookDeliveryService } from './delivery.service.js';

const WebhookDeliveryPage = PageOf(WebhookDelivery, 'WebhookDeliveryPage');

@ArgsType()
class WebhookDeliveryListArgs extends PageArgs {
  @Field(() => ID) subscriptionId!: string;
  @Field(() => DeliveryStatus, { nullable: true, description: 'Only deliveries in this status.' }) status?: DeliveryStatus | null;
}

const service = (ctx: PlatformContext) => new WebhookDeliveryService(ctx.em, ctx.identity!, ctx.platform);

@Resolver()
export class WebhookDeliveryResolver {
  @Authorized('read')
  @Query(() => WebhookDeliveryPage, { description: 'Deliveries of one subscription, newest first, with their attempts.' })
  webhookDeliveries(@Args() args: WebhookDeliveryListArgs, @Ctx() ctx: PlatformContext) {
    return service(ctx).list(args.subscriptionId, args);
  }

  @Authorized('read')
  @Query(() => WebhookDelivery)
  webhookDelivery(@Arg('subscriptionId', () => ID) subscriptionId: string, @Arg('deliveryId', () => ID) deliveryId: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).get(subscriptionId, deliveryId);
  }

  @Authorized('deploy')
  @Mutation(() => WebhookDelivery, { description: 'Sends the delivery again now, with the same event id; the answer is the delivery, pending until the attempt is recorded.' })
  redeliverWebhookDelivery(@Arg('subscriptionId', () => ID) subscriptionId: string, @Arg('deliveryId', () => ID) deliveryId: string, @Ctx() ctx: PlatformContext) {
    return service(ctx).redeliver(subscriptionId, deliveryId);
  }
}
