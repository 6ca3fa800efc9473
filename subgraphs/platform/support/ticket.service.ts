import type { EntityManager } from '@mikro-orm/postgresql';
import { findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { pageNewestFirst } from '../../../kernel/pagination.js';
import { NO_TENANT, TENANT_FILTER } from '../../../kernel/tenancy.js';
import type { Page } from '../../../kernel/graphql/page.js';
import { SupportTicket, TicketPriority, TicketStatus } from './ticket.entity.js';
import type { CreateSupportTicketInput, SupportTicketListArgs, UpdateSupportTicketInput } from './ticket.input.js';
import type { SupportTicketMetrics } from './ticket.metrics.js';

/**
 * Allowed status moves. A resolved ticket may be reopened; a closed one is final (open a new
 * ticket instead), so that resolution figures never change after the fact.
 */
const TRANSITIONS: Record<TicketStatus, readonly TicketStatus[]> = {
  [TicketStatus.open]: [TicketStatus.pending, TicketStatus.resolved, TicketStatus.closed],
  [TicketStatus.pending]: [TicketStatus.open, TicketStatus.resolved, TicketStatus.closed],
  [TicketStatus.resolved]: [TicketStatus.open, TicketStatus.closed],
  [TicketStatus.closed]: [],
};

export class SupportTicketService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
  ) {}

  list(args: SupportTicketListArgs): Promise<Page<SupportTicket>> {
    const where: Record<string, unknown> = {};
    if (args.status) where.status = args.status;
    if (args.priority) where.priority = args.priority;
    return pageNewestFirst<SupportTicket>(this.em, SupportTicket, 'support_tickets', where, args);
  }

  async get(id: string): Promise<SupportTicket> {
    return findByIdOrNotFound(this.em, SupportTicket, id, 'support ticket');
  }

  async create(input: CreateSupportTicketInput): Promise<SupportTicket> {
    const tenantId = this.identity.tenantId;
    if (!tenantId) throw new AppError(ErrorCodes.validationFailed, 'a platform-wide account has no tenant to open a ticket for');
    const ticket = this.em.create(SupportTicket, {
      tenantId,
      subject: input.subject.trim(),
      description: input.description,
      priority: input.priority ?? TicketPriority.normal,
      category: input.category ?? null,
      requester: this.identity.subject,
    });
    await this.em.persistAndFlush(ticket);
    return ticket;
  }

  async update(id: string, input: UpdateSupportTicketInput): Promise<SupportTicket> {
    const ticket = await this.get(id);
    if (ticket.status === TicketStatus.closed) {
      throw new AppError(ErrorCodes.invalidTransition, 'a closed ticket cannot be changed; open a new ticket instead');
    }
    if (input.subject !== undefined && input.subject !== null) ticket.subject = input.subject.trim();
    if (input.description !== undefined && input.description !== null) ticket.description = input.description;
    if (input.priority) ticket.priority = input.priority;
    if (input.category !== undefined) ticket.category = input.category;
    if (input.status && input.status !== ticket.status) {
      if (!TRANSITIONS[ticket.status].includes(input.status)) {
        throw new AppError(ErrorCodes.invalidTransition, `a ${ticket.status} ticket cannot become ${input.status}`);
      }
      const now = new Date();
      if (input.status === TicketStatus.resolved) ticket.resolvedAt = now;
      if (input.status === TicketStatus.open) ticket.resolvedAt = null;
      if (input.status === TicketStatus.closed) {
        ticket.closedAt = now;
        ticket.resolvedAt ??= now;
      }
      ticket.status = input.status;
    }
    ticket.updatedAt = new Date();
    await this.em.flush();
    return ticket;
  }

  /** All figures in one SQL statement over the caller's tenant. */
  async metrics(): Promise<SupportTicketMetrics> {
    const params = this.em.getFilterParams<{ tenantId: string | null; allTenants: boolean }>(TENANT_FILTER);
    const knex = this.em.getKnex();
    const query = knex
      .withSchema('platform')
      .from('support_ticket')
      .select(
        knex.raw('count(*)::int as total'),
        ...Object.values(TicketStatus).map((s) => knex.raw('(count(*) filter (where status = ?))::int as ??', [s, `status_${s}`])),
        ...Object.values(TicketPriority).map((p) => knex.raw("(count(*) filter (where priority = ? and status in ('open', 'pending')))::int as ??", [p, `open_${p}`])),
        knex.raw('percentile_cont(0.5) within group (order by extract(epoch from resolved_at - created_at)) filter (where resolved_at is not null) as median_resolve'),
        knex.raw("(count(*) filter (where resolved_at > now() - interval '7 days'))::int as resolved_7d"),
      );
    if (!params.allTenants) query.where('tenant_id', params.tenantId ?? NO_TENANT);
    const [row] = (await query) as Record<string, number | string | null>[];
    const n = (key: string) => Number(row?.[key] ?? 0);
    const median = row?.median_resolve;
    return {
      total: n('total'),
      byStatus: { open: n('status_open'), pending: n('status_pending'), resolved: n('status_resolved'), closed: n('status_closed') },
      openByPriority: { low: n('open_low'), normal: n('open_normal'), high: n('open_high'), urgent: n('open_urgent') },
      medianTimeToResolveSecs: median === null || median === undefined ? null : Math.round(Number(median) * 1000) / 1000,
      resolvedLast7Days: n('resolved_7d'),
    };
  }
}
