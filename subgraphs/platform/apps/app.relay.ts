import { PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { BusMessage } from '../../../kernel/bus.js';
import type { Logger } from '../../../kernel/logger.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import { CloudSpace } from '../cloudspaces/cloudspace.entity.js';
import { Cluster } from '../clusters/cluster.entity.js';
import { isNotFound } from '../orchestrator/kube.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { PlatformRuntime } from '../runtime.js';
import { App } from './app.entity.js';
import { APP_NAMESPACE, envSecretName, LABELS, PLATFORM_APP } from './app.render.js';
import { AppService, specOf } from './app.service.js';

const SYSTEM = { subject: 'platform-api', tenantId: null, roles: ['super_admin'], scopes: ['admin' as const] };

/**
 * Publishes apps' outbox entries to Kubernetes instead of a bus: `apply` writes the app's
 * current desired state as its PlatformApp resource (server-side apply of a resource named
 * after the app, so a retry or a repeat never makes a second one) and its secret environment as
 * a Secret in the virtual cluster (secrets never go to Git); `delete` removes the resource. A
 * failure (API server away) throws, and the outbox retries with backoff.
 */
export function platformAppPublisher(orm: MikroORM, orchestrator: Orchestrator, runtime: PlatformRuntime, logger: Logger) {
  return {
    async publish(message: BusMessage): Promise<void> {
      const em = tenantEntityManager(orm.em, SYSTEM);
      const app = await em.findOne(App, { id: String(message.body.app_id) }, { filters: false });
      if (!app) return; // deleted meanwhile: nothing to apply
      const space = await em.findOneOrFail(CloudSpace, { id: app.cloudspaceId }, { filters: false });
      const cluster = await em.findOneOrFail(Cluster, { id: space.clusterId }, { filters: false });
      const clients = await orchestrator.cluster(cluster);
      if (message.routingKey === 'delete') {
        try {
          await clients.custom.deleteNamespacedCustomObject({ group: PLATFORM_APP.group, version: PLATFORM_APP.version, namespace: space.namespace, plural: PLATFORM_APP.plural, name: app.name });
        } catch (error) {
          if (!isNotFound(error)) throw error;
        }
        runtime.appController?.nudge();
        return;
      }
      const secrets = new AppService(em, SYSTEM, runtime).secretValues(app);
      if (Object.keys(secrets).length > 0) {
        await orchestrator.virtualClusters(cluster).with(space.namespace, app.vcluster, async (vc) => {
          const secret: KubernetesObject & { stringData: Record<string, string>; type: string } = {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: envSecretName(app.name), namespace: APP_NAMESPACE, labels: { [LABELS.app]: app.name, [LABELS.appId]: app.id } },
            type: 'Opaque',
            stringData: secrets,
          };
          await vc.objects.patch(secret, undefined, undefined, 'platform-api', true, PatchStrategy.ServerSideApply);
        });
      }
      const resource = {
        apiVersion: `${PLATFORM_APP.group}/${PLATFORM_APP.version}`,
        kind: PLATFORM_APP.kind,
        metadata: {
          name: app.name,
          namespace: space.namespace,
          labels: { [LABELS.appId]: app.id, [LABELS.tenant]: app.tenantId },
          annotations: { 'cloudops.dev/change': app.change },
        },
        spec: specOf(app, space.namespace),
      };
      await clients.objects.patch(resource, undefined, undefined, 'platform-api', true, PatchStrategy.ServerSideApply);
      logger.debug({ app: app.id, generation: app.generation }, 'PlatformApp applied');
      runtime.appController?.nudge();
    },
  };
}
