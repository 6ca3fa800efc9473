import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../../kernel/logger.js';
import { startPassLoop } from '../../../kernel/loop.js';
import { tenantEntityManager } from '../../../kernel/tenancy.js';
import { CloudSpace, CloudSpaceStatus } from '../cloudspaces/cloudspace.entity.js';
import { declareVirtualCluster, LABELS, quotaManifest } from '../cloudspaces/cloudspace.service.js';
import { Cluster, ClusterPhase, ClusterSource } from '../clusters/cluster.entity.js';
import { CAPI, clusterSummary } from '../clusters/cluster.service.js';
import { queuePlatformEvent, queueWorkflowManagerNotice } from '../events.js';
import type { PlatformRuntime } from '../runtime.js';
import { clusterUnavailable, isConflict, isNotFound, orUndefined } from './kube.js';
import type { Orchestrator } from './orchestrator.js';

const LEASE_MS = 30_000;
const CAPI_PHASES = new Set<string>(Object.values(ClusterPhase));

export interface Reconciler {
  nudge(): void;
  /** One pass over everything due (tests). */
  pass(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Moves clusters and CloudSpaces towards what was asked, one small idempotent step per pass:
 * follows Cluster API clusters' `status.phase`, provisions CloudSpaces (namespace, quota,
 * default virtual cluster, then Ready with `cloudspace.ready`), and removes deleted ones. Rows
 * are claimed with `FOR UPDATE SKIP LOCKED` and a lease, so any number of replicas share the
 * work; a step that fails (the API server is away) is simply tried again on a later pass.
 */
export function startReconciler(options: { orm: MikroORM; orchestrator: Orchestrator; runtime: PlatformRuntime; logger: Logger; intervalMs?: number }): Reconciler {
  const { orm, orchestrator, runtime, logger } = options;
  const knex = orm.em.getConnection().getKnex();

  const claim = async (table: 'cluster' | 'cloudspace', column: string, states: string[], extra: (q: ReturnType<typeof knex>) => void = () => undefined): Promise<string[]> => {
    const now = new Date();
    const due = knex(`platform.${table}`).select('id').whereIn(column, states).andWhere((q) => void q.whereNull('lease_until').orWhere('lease_until', '<=', now)).limit(20).forUpdate().skipLocked();
    extra(due);
    const rows = (await knex(`platform.${table}`).update({ lease_until: new Date(now.getTime() + LEASE_MS) }).whereIn('id', due).returning('id')) as { id: string }[];
    return rows.map((r) => r.id);
  };
  const release = (table: 'cluster' | 'cloudspace', id: string, inMs: number) => knex(`platform.${table}`).update({ lease_until: new Date(Date.now() + inMs) }).where({ id });

  /** A Cluster API cluster: copy its phase; once gone after Deleting, forget it. */
  const followCluster = async (id: string) => {
    const em = tenantEntityManager(orm.em, null);
    const cluster = await em.findOne(Cluster, { id }, { filters: false });
    if (!cluster || cluster.source !== ClusterSource.cluster_api) return;
    const object = (await orUndefined(orchestrator.host().custom.getNamespacedCustomObject({ group: CAPI.group, version: CAPI.version, namespace: orchestrator.clusterApiNamespace, plural: CAPI.plural, name: cluster.capiName! }))) as
      | { status?: { phase?: string; failureMessage?: string } }
      | undefined;
    if (!object) {
      if (cluster.phase === ClusterPhase.Deleting) {
        queueWorkflowManagerNotice(em, runtime, 'removed', clusterSummary(cluster));
        em.remove(cluster);
        await em.flush();
        orchestrator.forget(cluster.id);
        runtime.relays?.forEach((r) => r.nudge());
      }
      return;
    }
    const phase = object.status?.phase;
    if (!phase || !CAPI_PHASES.has(phase) || phase === cluster.phase || cluster.phase === ClusterPhase.Deleting) {
      await release('cluster', id, 200);
      return;
    }
    const previous = cluster.phase;
    cluster.phase = phase as ClusterPhase;
    cluster.message = object.status?.failureMessage ?? `Cluster API: ${phase}`;
    cluster.updatedAt = new Date();
    if (cluster.phase === ClusterPhase.Provisioned) cluster.provisionedAt = new Date();
    queuePlatformEvent(em, 'cluster.phase_changed', cluster.tenantId, { cluster_id: cluster.id, cluster_name: cluster.name, phase, previous_phase: previous, message: cluster.message });
    cluster.leaseUntil = new Date(Date.now() + 200);
    await em.flush();
    runtime.relays?.forEach((r) => r.nudge());
  };

  /** One step of a CloudSpace towards Ready, or towards gone. */
  const advanceCloudSpace = async (id: string) => {
    const em = tenantEntityManager(orm.em, null);
    const space = await em.findOne(CloudSpace, { id }, { filters: false });
    if (!space) return;
    const cluster = await em.findOne(Cluster, { id: space.clusterId }, { filters: false });
    if (!cluster) {
      space.status = CloudSpaceStatus.Failed;
      space.message = 'its cluster no longer exists';
      await em.flush();
      return;
    }
    const clients = await orchestrator.cluster(cluster);
    if (space.status === CloudSpaceStatus.Deleting) {
      const namespace = await orUndefined(clients.core.readNamespace({ name: space.namespace }));
      if (namespace) {
        await clients.core.deleteNamespace({ name: space.namespace }).catch((error: unknown) => {
          if (!isNotFound(error)) throw error;
        });
        await release('cloudspace', id, 200);
        return;
      }
      orchestrator.virtualClusters(cluster).drop(space.namespace, space.defaultVcluster);
      em.remove(space);
      await em.flush();
      return;
    }
    if (space.status === CloudSpaceStatus.Pending) {
      const labels = { [LABELS.tenant]: space.tenantId, [LABELS.cloudspace]: space.id };
      await clients.core.createNamespace({ body: { metadata: { name: space.namespace, labels } } }).catch((error: unknown) => {
        if (!isConflict(error)) throw error;
      });
      await clients.core.createNamespacedResourceQuota({ namespace: space.namespace, body: quotaManifest(space) }).catch((error: unknown) => {
        if (!isConflict(error)) throw error;
      });
      await declareVirtualCluster(clients, space, space.defaultVcluster);
      space.status = CloudSpaceStatus.Provisioning;
      space.message = `namespace ${space.namespace}, quota and virtual cluster ${space.defaultVcluster} declared; waiting for the virtual cluster`;
      space.updatedAt = new Date();
      space.leaseUntil = new Date(Date.now() + 200);
      await em.flush();
      return;
    }
    // Provisioning: Ready once the default virtual cluster is provisioned and its kubeconfig exists.
    const vc = (await orUndefined(clients.custom.getNamespacedCustomObject({ group: CAPI.group, version: CAPI.version, namespace: space.namespace, plural: CAPI.plural, name: space.defaultVcluster }))) as { status?: { phase?: string } } | undefined;
    const phase = vc?.status?.phase;
    if (phase === 'Failed') {
      space.status = CloudSpaceStatus.Failed;
      space.message = `virtual cluster ${space.defaultVcluster} failed`;
      space.updatedAt = new Date();
      await em.flush();
      return;
    }
    const secret = phase === 'Provisioned' ? await orUndefined(clients.core.readNamespacedSecret({ namespace: space.namespace, name: `${space.defaultVcluster}-kubeconfig` })) : undefined;
    if (!secret?.data?.value) {
      await release('cloudspace', id, 200);
      return;
    }
    space.status = CloudSpaceStatus.Ready;
    space.readyAt = new Date();
    space.updatedAt = new Date();
    space.message = 'ready';
    space.attempts = 0;
    queuePlatformEvent(em, 'cloudspace.ready', space.tenantId, { cloudspace_id: space.id, cloudspace_name: space.name, cluster_id: space.clusterId, vclusters: [space.defaultVcluster] });
    await em.flush();
    runtime.relays?.forEach((r) => r.nudge());
  };

  const step = async (table: 'cluster' | 'cloudspace', id: string, work: (id: string) => Promise<void>) => {
    try {
      await work(id);
    } catch (error) {
      // The API server is away or refused: try again later, backing off a little.
      const row = (await knex(`platform.${table}`).select(table === 'cloudspace' ? 'attempts' : 'id').where({ id }).first()) as { attempts?: number } | undefined;
      const attempts = row?.attempts ?? 0;
      const delay = Math.min(30_000, 500 * 2 ** Math.min(attempts, 6));
      if (table === 'cloudspace') await knex('platform.cloudspace').update({ attempts: attempts + 1, lease_until: new Date(Date.now() + delay), message: `retrying: ${String((error as Error)?.message ?? error).slice(0, 200)}` }).where({ id });
      else await release(table, id, delay);
      logger.warn({ [table]: id, retryInMs: delay, error: clusterUnavailable('the cluster', error).message }, `${table} step failed; will retry`);
    }
  };

  const pass = async () => {
    if (!orchestrator.configured) return;
    const clusters = await claim('cluster', 'phase', [ClusterPhase.Pending, ClusterPhase.Provisioning, ClusterPhase.Deleting], (q) => void q.where('source', ClusterSource.cluster_api));
    const spaces = await claim('cloudspace', 'status', [CloudSpaceStatus.Pending, CloudSpaceStatus.Provisioning, CloudSpaceStatus.Deleting]);
    await Promise.all([...clusters.map((id) => step('cluster', id, followCluster)), ...spaces.map((id) => step('cloudspace', id, advanceCloudSpace))]);
  };

  const loop = startPassLoop({ name: 'reconciler', pass, intervalMs: options.intervalMs ?? 250, logger });
  return { nudge: loop.nudge, pass, stop: loop.stop };
}
