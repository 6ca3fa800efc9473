import type { RestRoute } from './route.js';

const TICKET_FIELDS = /* GraphQL */ `
  id tenantId subject description priority status category requester createdAt updatedAt resolvedAt closedAt
`;

const health = (service: 'platform' | 'auth' | 'cicd', path: string): RestRoute => ({
  prefix: service,
  method: 'GET',
  path,
  summary: `Health of the ${service} service`,
  description: 'Public. Answers 503 `service_unavailable` with the envelope when the service cannot reach its database.',
  auth: 'public',
  operation: /* GraphQL */ `query ${service[0]!.toUpperCase()}${service.slice(1)}Health { ${service}Health { service status database version } }`,
  degraded: (result) => (result.database ? undefined : `${service} cannot reach its database`),
});

export const healthRoutes: RestRoute[] = [
  health('platform', '/healthz'),
  health('platform', '/health'),
  health('auth', '/health'),
  health('cicd', '/healthz'),
];

export const platformRoutes: RestRoute[] = [
  {
    prefix: 'platform',
    method: 'GET',
    path: '/api/v1/support/tickets',
    summary: 'List support tickets',
    description: 'Tickets of the caller\'s tenant, newest first. Filter by `status` and `priority`. Scope `read`.',
    paginated: true,
    scope: 'read',
    query: ['status', 'priority'],
    operation: /* GraphQL */ `
      query ListSupportTickets($limit: Int, $cursor: String, $status: TicketStatus, $priority: TicketPriority) {
        supportTickets(limit: $limit, cursor: $cursor, status: $status, priority: $priority) {
          data { ${TICKET_FIELDS} }
          nextCursor
          total
        }
      }`,
  },
  {
    prefix: 'platform',
    method: 'POST',
    path: '/api/v1/support/tickets',
    summary: 'Open a support ticket',
    description: 'Scope `deploy` (any write). The requester is the caller.',
    body: 'input',
    status: 201,
    scope: 'deploy',
    operation: /* GraphQL */ `
      mutation CreateSupportTicket($input: CreateSupportTicketInput!) {
        createSupportTicket(input: $input) { ${TICKET_FIELDS} }
      }`,
  },
  {
    prefix: 'platform',
    method: 'GET',
    path: '/api/v1/support/tickets/metrics',
    summary: 'Support metrics',
    description: 'Counts by status, unresolved tickets by priority, median time to resolve, resolutions in the last 7 days. Scope `read`.',
    scope: 'read',
    operation: /* GraphQL */ `
      query SupportTicketMetrics {
        supportTicketMetrics {
          total
          byStatus { open pending resolved closed }
          openByPriority { low normal high urgent }
          medianTimeToResolveSecs
          resolvedLast7Days
        }
      }`,
  },
  {
    prefix: 'platform',
    method: 'GET',
    path: '/api/v1/support/tickets/{id}',
    summary: 'One support ticket',
    description: 'Scope `read`. Another tenant\'s ticket is `not_found`.',
    scope: 'read',
    operation: /* GraphQL */ `
      query SupportTicket($id: ID!) {
        supportTicket(id: $id) { ${TICKET_FIELDS} }
      }`,
  },
  {
    prefix: 'platform',
    method: 'PATCH',
    path: '/api/v1/support/tickets/{id}',
    summary: 'Update a support ticket',
    description:
      'Change subject, description, priority, category or status. Status moves: open → pending | resolved | closed; pending → open | resolved | closed; resolved → open | closed; closed is final (409 `invalid_transition`). Scope `deploy`.',
    body: 'input',
    scope: 'deploy',
    operation: /* GraphQL */ `
      mutation UpdateSupportTicket($id: ID!, $input: UpdateSupportTicketInput!) {
        updateSupportTicket(id: $id, input: $input) { ${TICKET_FIELDS} }
      }`,
  },
];
