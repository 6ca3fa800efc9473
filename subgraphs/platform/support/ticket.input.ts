import { IsOptional, Length, MaxLength } from 'class-validator';
import { ArgsType, Field, InputType } from 'type-graphql';
import { PageArgs } from '../../../kernel/graphql/page.js';
import { TicketPriority, TicketStatus } from './ticket.entity.js';

@InputType({ description: 'A new support ticket.' })
export class CreateSupportTicketInput {
  @Field()
  @Length(1, 200)
  subject!: string;

  @Field()
  @Length(1, 10_000)
  description!: string;

  @Field(() => TicketPriority, { nullable: true, description: 'Default: normal.' })
  @IsOptional()
  priority?: TicketPriority;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(64)
  category?: string | null;
}

@InputType({ description: 'Changes to a support ticket; omitted fields stay as they are.' })
export class UpdateSupportTicketInput {
  @Field({ nullable: true })
  @IsOptional()
  @Length(1, 200)
  subject?: string;

  @Field({ nullable: true })
  @IsOptional()
  @Length(1, 10_000)
  description?: string;

  @Field(() => TicketPriority, { nullable: true })
  @IsOptional()
  priority?: TicketPriority;

  @Field(() => TicketStatus, { nullable: true, description: 'See TicketStatus for the allowed moves.' })
  @IsOptional()
  status?: TicketStatus;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @MaxLength(64)
  category?: string | null;
}

@ArgsType()
export class SupportTicketListArgs extends PageArgs {
  @Field(() => TicketStatus, { nullable: true })
  status?: TicketStatus;

  @Field(() => TicketPriority, { nullable: true })
  priority?: TicketPriority;
}
