import { Arg, Args, Authorized, Ctx, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { SubgraphContext } from '../../../kernel/graphql/subgraph.js';
import { PageOf } from '../../../kernel/graphql/page.js';
import { SupportTicket } from './ticket.entity.js';
import { CreateSupportTicketInput, SupportTicketListArgs, UpdateSupportTicketInput } from './ticket.input.js';
import { SupportTicketMetrics } from './ticket.metrics.js';
import { SupportTicketService } from './ticket.service.js';

export const SupportTicketPage = PageOf(SupportTicket, 'SupportTicketPage');

const service = (ctx: SubgraphContext) => new SupportTicketService(ctx.em, ctx.identity!);

@Resolver(() => SupportTicket)
export class SupportTicketResolver {
  @Authorized('read')
  @Query(() => SupportTicketPage, { description: 'Support tickets of the caller\'s tenant, newest first.' })
  supportTickets(@Args() args: SupportTicketListArgs, @Ctx() ctx: SubgraphContext) {
    return service(ctx).list(args);
  }

  @Authorized('read')
  @Query(() => SupportTicket)
  supportTicket(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext) {
    return service(ctx).get(id);
  }

  @Authorized('read')
  @Query(() => SupportTicketMetrics)
  supportTicketMetrics(@Ctx() ctx: SubgraphContext) {
    return service(ctx).metrics();
  }

  // Opening or changing a ticket is a write: a read-only credential may not do it.
  @Authorized('deploy')
  @Mutation(() => SupportTicket)
  createSupportTicket(@Arg('input') input: CreateSupportTicketInput, @Ctx() ctx: SubgraphContext) {
    return service(ctx).create(input);
  }

  @Authorized('deploy')
  @Mutation(() => SupportTicket)
  updateSupportTicket(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateSupportTicketInput, @Ctx() ctx: SubgraphContext) {
    return service(ctx).update(id, input);
  }
}
