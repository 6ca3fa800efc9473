import { Field, Float, Int, ObjectType } from 'type-graphql';

@ObjectType({ description: 'Ticket counts by status.' })
export class TicketStatusCounts {
  @Field(() => Int) open!: number;
  @Field(() => Int) pending!: number;
  @Field(() => Int) resolved!: number;
  @Field(() => Int) closed!: number;
}

@ObjectType({ description: 'Ticket counts by priority.' })
export class TicketPriorityCounts {
  @Field(() => Int) low!: number;
  @Field(() => Int) normal!: number;
  @Field(() => Int) high!: number;
  @Field(() => Int) urgent!: number;
}

@ObjectType({ description: 'Support desk figures for the caller\'s tenant (every tenant for a platform administrator).' })
export class SupportTicketMetrics {
  @Field(() => Int, { description: 'All tickets ever opened.' })
  total!: number;

  @Field(() => TicketStatusCounts)
  byStatus!: TicketStatusCounts;

  @Field(() => TicketPriorityCounts, { description: 'Tickets not yet resolved (open or pending), by priority.' })
  openByPriority!: TicketPriorityCounts;

  @Field(() => Float, { nullable: true, description: 'Median seconds from opening to resolution over resolved and closed tickets; null when none was resolved.' })
  medianTimeToResolveSecs!: number | null;

  @Field(() => Int, { description: 'Tickets resolved in the last 7 days.' })
  resolvedLast7Days!: number;
}
