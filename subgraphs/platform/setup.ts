import type { PubSub } from '@graphql-yoga/subscription';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEventBus, EXCHANGES } from '../../kernel/bus.js';
import { loadPlatformConfig } from '../../kernel/config.js';
import { createSecretBox, parseEncryptionKey } from '../../kernel/crypto.js';
import type { SubgraphDeps, SubgraphRuntime } from '../../kernel/graphql/startSubgraph.js';
import { startOutboxRelay, type OutboxRelay } from '../../kernel/outbox.js';
import { ROLES, type Identity } from '../../kernel/identity.js';
import { tenantEntityManager } from '../../kernel/tenancy.js';
import { registerPodLogStream } from './cloudspaces/logs.js';
import { registerAppLogStream } from './apps/app.logs.js';
import { startAppController, type AppController } from './apps/app.controller.js';
import { platformAppPublisher } from './apps/app.relay.js';
import { APP_STATUS_CHANGED } from './apps/app.resolver.js';
import { PLATFORM_APP_EXCHANGE } from './apps/app.service.js';
import { ReachabilityChecker } from './apps/app.status.js';
import { ClusterService } from './clusters/cluster.service.js';
import { openFleetRepo } from './gitops/fleet-repo.js';
import { WORKFLOW_MANAGER_EXCHANGE } from './events.js';
import { loadHostKubeConfig } from './orchestrator/kube.js';
import { Orchestrator } from './orchestrator/orchestrator.js';
import { startReconciler } from './orchestrator/reconciler.js';
import type { PlatformRuntime } from './runtime.js';
import { startDispatcher } from './webhooks/delivery.dispatcher.js';
import { startEventConsumer } from './webhooks/delivery.fanout.js';
import { workflowManagerPublisher } from './workflow-manager.js';

/**
 * The platform runtime: configuration, the secret box, the outbox relays (events to the bus,
 * notices to workflow-manager), Kubernetes (the orchestrator and the reconciler that provisions
 * CloudSpaces and follows clusters), and outbound webhooks (the consumer of `platform.events`
 * and `cicd.events` that fans events out into deliveries, and the dispatcher that sends them),
 * and the private route the edge proxies followed pod logs to.
 */
export async function setupPlatform({ orm, logger, app, config: subgraphConfig }: SubgraphDeps, pubSub: PubSub<Record<string, [unknown]>>): Promise<SubgraphRuntime> {
  const config = loadPlatformConfig();
  const box = createSecretBox(parseEncryptionKey(config.secretEncryptionKey)!);
  const knex = orm.em.getConnection().getKnex();
  const bus = createEventBus(config.rabbitmqUrl, logger);
  const relays: OutboxRelay[] = [startOutboxRelay({ orm, schema: 'platform', bus, logger, exchanges: [EXCHANGES.platform] })];
  if (config.workflowManagerUrl) {
    relays.push(startOutboxRelay({ orm, schema: 'platform', bus: workflowManagerPublisher(config.workflowManagerUrl, config.internalJwtSecret), logger, exchanges: [WORKFLOW_MANAGER_EXCHANGE] }));
  }
  const orchestrator = new Orchestrator(loadHostKubeConfig(config.kubeconfig, logger), box, config.clusterApiNamespace);
  const dispatcher = startDispatcher({
    knex,
    box,
    logger,
    allowPrivateNetworks: config.webhooks.allowPrivateNetworks,
    caFile: config.webhooks.caFile,
    concurrency: config.webhooks.concurrency,
  });
  const runtime: PlatformRuntime = { config, box, dispatcher, orchestrator, relays, logger };
  if (config.registerManagementCluster && orchestrator.configured) {
    // The local profile's convenience: CloudSpaces can be created at once.
    const system: Identity = { subject: 'platform-api', tenantId: null, roles: [ROLES.superAdmin], scopes: ['admin'] };
    await new ClusterService(tenantEntityManager(orm.em, system), system, runtime).registerSelf().then(
      (cluster) => logger.info({ cluster: cluster.id }, 'management cluster registered'),
      (error: unknown) => logger.warn({ err: error }, 'could not register the management cluster; POST /clusters/register-self later'),
    );
  }
  const reconciler = startReconciler({ orm, orchestrator, runtime, logger });
  // Apps: the relay that turns their outbox entries into PlatformApp resources, and, with a
  // fleet repository, the leader-elected controller that commits them.
  runtime.appRelay = startOutboxRelay({ orm, schema: 'platform', bus: platformAppPublisher(orm, orchestrator, runtime, logger), logger, exchanges: [PLATFORM_APP_EXCHANGE] });
  runtime.appEvents = (changed) => pubSub.publish(APP_STATUS_CHANGED, changed);
  let appController: AppController | undefined;
  if (config.apps.gitUrl && orchestrator.configured) {
    const workdir = config.apps.gitWorkdir ?? mkdtempSync(join(tmpdir(), 'fleet-'));
    runtime.fleet = await openFleetRepo({ url: config.apps.gitUrl, branch: config.apps.gitBranch, workdir, author: { name: 'cloudops platform', email: 'platform@cloudops.invalid' }, logger });
    runtime.checker = new ReachabilityChecker({ ingressAddress: config.apps.ingressAddress, caFile: config.apps.ingressCaFile });
    appController = startAppController({ orm, databaseUrl: subgraphConfig.databaseUrl!, orchestrator, fleet: runtime.fleet, checker: runtime.checker, runtime, logger });
    runtime.appController = appController;
    logger.info({ repository: config.apps.gitUrl, branch: config.apps.gitBranch, workdir }, 'fleet repository ready');
  } else {
    logger.warn('FLUX_GIT_URL is not set: apps get their PlatformApp resource, but nothing commits them to Git (deploy-status answers 503)');
  }
  // Followed pod logs stream, which GraphQL cannot: a private route the edge proxies to.
  registerPodLogStream(app, { orm, runtime });
  registerAppLogStream(app, { orm, runtime });
  runtime.reconciler = reconciler;
  await startEventConsumer({ knex, bus, logger, clock: () => new Date(), onDeliveries: () => dispatcher.nudge(), queuePrefix: config.queuePrefix });
  logger.info({ bus: bus.kind, kubernetes: orchestrator.configured, workflowManager: Boolean(config.workflowManagerUrl), allowPrivateNetworks: config.webhooks.allowPrivateNetworks }, 'platform workers started');
  return {
    context: { platform: runtime },
    async stop() {
      await reconciler.stop();
      await appController?.stop();
      await runtime.appRelay?.stop();
      await runtime.checker?.close();
      await Promise.all(relays.map((r) => r.stop()));
      await bus.close();
      await dispatcher.stop();
    },
  };
}
