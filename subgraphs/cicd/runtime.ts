import type { PubSub } from '@graphql-yoga/subscription';
import type { CicdConfig } from '../../kernel/config.js';
import type { SecretBox } from '../../kernel/crypto.js';
import type { SubgraphContext } from '../../kernel/graphql/subgraph.js';
import type { OutboxRelay } from '../../kernel/outbox.js';

/** Topic of the in-process pub/sub that feeds the `pipelineRunUpdated` subscription. */
export const RUN_UPDATED = 'PIPELINE_RUN_UPDATED';

export interface RunUpdate {
  tenantId: string;
  pipelineId: string;
  runId: string;
}

export type CicdPubSub = PubSub<{ [RUN_UPDATED]: [RunUpdate] }>;

/** What the cicd services need besides the request. */
export interface CicdRuntime {
  config: CicdConfig;
  box: SecretBox;
  relay: OutboxRelay;
  pubSub: CicdPubSub;
}

export interface CicdContext extends SubgraphContext {
  cicd: CicdRuntime;
}

/** Purpose strings bound into sealed secrets (AES-GCM additional data). */
export const webhookSecretPurpose = (pipelineId: string) => `cicd.pipeline.webhook_secret:${pipelineId}`;
