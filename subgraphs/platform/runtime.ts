import type { PlatformConfig } from '../../kernel/config.js';
import { AppError, ErrorCodes } from '../../kernel/errors.js';
import type { SecretBox } from '../../kernel/crypto.js';
import type { SubgraphContext } from '../../kernel/graphql/subgraph.js';
import type { Logger } from '../../kernel/logger.js';
import type { OutboxRelay } from '../../kernel/outbox.js';
import type { App } from './apps/app.entity.js';
import type { ReachabilityChecker } from './apps/app.status.js';
import type { FleetRepo } from './gitops/fleet-repo.js';
import type { Orchestrator } from './orchestrator/orchestrator.js';
import type { Dispatcher } from './webhooks/delivery.dispatcher.js';

/** What the platform services need besides the request. */
export interface PlatformRuntime {
  config: PlatformConfig;
  box: SecretBox;
  /** Sends webhook deliveries; absent where only the schema is built. */
  dispatcher?: Dispatcher;
  /** Kubernetes: the management cluster, managed clusters and virtual clusters. */
  orchestrator?: Orchestrator;
  /** Publishes the platform outbox (events, workflow-manager notices); nudged after commits. */
  relays?: OutboxRelay[];
  /** Turns apps' outbox entries into PlatformApp resources; nudged after commits. */
  appRelay?: OutboxRelay;
  /** Renders and commits PlatformApps (on the leader); nudged when one changes. */
  appController?: { nudge(): void };
  /** Provisions CloudSpaces and follows clusters' phases; nudged after changes. */
  reconciler?: { nudge(): void };
  /** The fleet repository (FLUX_GIT_URL) and the reachability check of app addresses. */
  fleet?: FleetRepo;
  checker?: ReachabilityChecker;
  /** Tells `appStatusChanged` subscribers (this replica's). */
  appEvents?: (app: App) => void;
  logger?: Logger;
}

export interface PlatformContext extends SubgraphContext {
  platform: PlatformRuntime;
}

/** The orchestrator, or 503 `upstream_unavailable` where no management cluster is configured. */
export function requireOrchestrator(runtime: PlatformRuntime): Orchestrator {
  if (!runtime.orchestrator?.configured) throw new AppError(ErrorCodes.upstreamUnavailable, 'no Kubernetes management cluster is configured (KUBECONFIG)');
  return runtime.orchestrator;
}
