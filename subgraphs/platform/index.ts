import { createPubSub } from '@graphql-yoga/subscription';
import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';
import { AppResolver } from './apps/app.resolver.js';
import { AppExtrasResolver } from './apps/app.extras.resolver.js';
import { migrations } from './migrations/index.js';
import { SupportTicket } from './support/ticket.entity.js';
import { SupportTicketResolver } from './support/ticket.resolver.js';
import { OutboxMessage } from '../../kernel/outbox.js';
import { App, AppRevisionNote } from './apps/app.entity.js';
import { CloudSpace } from './cloudspaces/cloudspace.entity.js';
import { CloudSpaceResolver } from './cloudspaces/cloudspace.resolver.js';
import { CloudSpaceViewsResolver } from './cloudspaces/views.resolver.js';
import { Cluster } from './clusters/cluster.entity.js';
import { ClusterResolver } from './clusters/cluster.resolver.js';
import { OnboardingResolver } from './onboarding/onboarding.resolver.js';
import { EventInbox, WebhookDelivery, WebhookDeliveryAttempt } from './webhooks/delivery.entity.js';
import { WebhookDeliveryResolver } from './webhooks/delivery.resolver.js';
import { WebhookSubscription } from './webhooks/webhook.entity.js';
import { WebhookSubscriptionResolver } from './webhooks/webhook.resolver.js';

/** App status changes for `appStatusChanged` (in-process: subscribers of the replica whose controller saw the change). */
export const platformPubSub = createPubSub();

/** platform: apps, CloudSpaces, clusters, webhooks, federation, onboarding, support. */
export const platformSubgraph: SubgraphDefinition = {
  name: 'platform',
  entities: [SupportTicket, WebhookSubscription, WebhookDelivery, WebhookDeliveryAttempt, EventInbox, OutboxMessage, Cluster, CloudSpace, App, AppRevisionNote],
  migrations,
  resolvers: [SupportTicketResolver, WebhookSubscriptionResolver, WebhookDeliveryResolver, ClusterResolver, CloudSpaceResolver, CloudSpaceViewsResolver, OnboardingResolver, AppResolver, AppExtrasResolver],
  pubSub: platformPubSub as never,
  setup: async (deps) => (await import('./setup.js')).setupPlatform(deps, platformPubSub),
};
