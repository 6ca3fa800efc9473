import { Entity, Enum, Index, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { TenantScoped } from '../../../kernel/tenancy.js';

export enum TicketStatus {
  open = 'open',
  pending = 'pending',
  resolved = 'resolved',
  closed = 'closed',
}

export enum TicketPriority {
  low = 'low',
  normal = 'normal',
  high = 'high',
  urgent = 'urgent',
}

registerEnumType(TicketStatus, {
  name: 'TicketStatus',
  description: 'open: awaiting support; pending: awaiting the requester; resolved: answered (may be reopened); closed: final.',
});
registerEnumType(TicketPriority, { name: 'TicketPriority' });

@Entity({ tableName: 'support_ticket' })
@TenantScoped()
@Index({ name: 'support_ticket_tenant_created_idx', properties: ['tenantId', 'createdAt', 'id'] })
@ObjectType({ description: 'A support request opened by a tenant user.' })
export class SupportTicket {
  [OptionalProps]?: 'id' | 'priority' | 'status' | 'category' | 'createdAt' | 'updatedAt' | 'resolvedAt' | 'closedAt';

  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'Tenant that owns the ticket.' })
  tenantId!: string;

  @Property({ type: 'text' })
  @Field()
  subject!: string;

  @Property({ type: 'text' })
  @Field()
  description!: string;

  @Enum({ items: () => TicketPriority, type: 'text' })
  @Field(() => TicketPriority)
  priority: TicketPriority = TicketPriority.normal;

  @Enum({ items: () => TicketStatus, type: 'text' })
  @Field(() => TicketStatus)
  status: TicketStatus = TicketStatus.open;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Free-form area such as billing, deployments or access.' })
  category: string | null = null;

  @Property({ type: 'text' })
  @Field({ description: 'Subject (user or service account) that opened the ticket.' })
  requester!: string;

  @Property({ type: 'timestamptz' })
  @Field()
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field()
  updatedAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the ticket was last resolved.' })
  resolvedAt: Date | null = null;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  closedAt: Date | null = null;
}
