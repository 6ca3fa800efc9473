import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';
import { migrations } from './migrations/index.js';
import { SupportTicket } from './support/ticket.entity.js';
import { SupportTicketResolver } from './support/ticket.resolver.js';

/** platform: apps, CloudSpaces, clusters, webhooks, federation, onboarding, support. */
export const platformSubgraph: SubgraphDefinition = {
  name: 'platform',
  entities: [SupportTicket],
  migrations,
  resolvers: [SupportTicketResolver],
};
