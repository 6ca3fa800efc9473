import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';
import { migrations } from './migrations/index.js';
import { SupportTicket } from './support/ticket.entity.js';
import { SupportTicketResolver } from './support/ticket.resolver.js';
import { WebhookSubscription } from './webhooks/webhook.entity.js';
import { WebhookSubscriptionResolver } from './webhooks/webhook.resolver.js';

/** platform: apps, CloudSpaces, clusters, webhooks, federation, onboarding, support. */
export const platformSubgraph: SubgraphDefinition = {
  name: 'platform',
  entities: [SupportTicket, WebhookSubscription],
  migrations,
  resolvers: [SupportTicketResolver, WebhookSubscriptionResolver],
  setup: async (deps) => (await import('./setup.js')).setupPlatform(deps),
};
