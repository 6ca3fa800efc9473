import { createPubSub } from '@graphql-yoga/subscription';
import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';
import { OutboxMessage } from '../../kernel/outbox.js';
import { migrations } from './migrations/index.js';
import { OnboardingChecklist, onboardingReferenceResolvers } from './onboarding/onboarding.reference.js';
import { Pipeline } from './pipeline/pipeline.entity.js';
import { PipelineResolver, PipelineRunResolver } from './pipeline/pipeline.resolver.js';
import { PipelineRun, StageRun } from './run/run.entity.js';
import type { CicdPubSub } from './runtime.js';
import { WebhookDelivery } from './webhook/webhook-delivery.entity.js';

/**
 * Run updates for the `pipelineRunUpdated` subscription. In-process: subscribers connected to
 * this replica see the runs this replica changes (see the note in the README).
 */
export const cicdPubSub: CicdPubSub = createPubSub();

/** cicd: pipelines, runs, stages, Git-host webhooks and cicd.events. */
export const cicdSubgraph: SubgraphDefinition = {
  name: 'cicd',
  entities: [Pipeline, PipelineRun, StageRun, WebhookDelivery, OutboxMessage],
  migrations,
  resolvers: [PipelineResolver, PipelineRunResolver],
  orphanedTypes: [OnboardingChecklist],
  referenceResolvers: onboardingReferenceResolvers,
  pubSub: cicdPubSub as never,
  setup: async (deps) => (await import('./setup.js')).setupCicd(deps, cicdPubSub),
};
