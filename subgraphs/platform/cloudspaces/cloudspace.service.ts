import type { EntityManager } from '@mikro-orm/postgresql';
import { conflictOnDuplicate, findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import type { Logger } from '../../../kernel/logger.js';
import { pageNewestFirst, type PageOfRows } from '../../../kernel/pagination.js';
import { Cluster, ClusterPhase, ClusterSource } from '../clusters/cluster.entity.js';
import { CAPI, checkDnsLabel, INFRA_GROUP } from '../clusters/cluster.service.js';
import { clusterUnavailable, isConflict, isNotFound, orUndefined, type KubeClients } from '../orchestrator/kube.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import { requireOrchestrator, type PlatformRuntime } from '../runtime.js';
import { CloudSpace, CloudSpaceStatus } from './cloudspace.entity.js';

/** The vcluster provider of Cluster API: a `Cluster` whose infrastructure is a `VCluster`. */
export const VCLUSTER = { group: INFRA_GROUP, version: 'v1alpha1', plural: 'vclusters', kind: 'VCluster' } as const;
export const QUOTA_NAME = 'cloudspace-quota';
export const DEFAULT_VCLUSTER = 'main';
export const LABELS = { tenant: 'cloudops.dev/tenant', cloudspace: 'cloudops.dev/cloudspace' } as const;

/** Kubernetes quantities (cpu `500m`, `2`; memory `512Mi`, `8Gi`, `1G`). */
const QUANTITY = /^(\d+(\.\d+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
export function checkQuantity(value: string, field: string): string {
  const v = value.trim();
  if (!QUANTITY.test(v) || v.length > 20) throw new AppError(ErrorCodes.validationFailed, `${field} must be a Kubernetes quantity such as 500m, 2, 512Mi or 8Gi`);
  return v;
}

function checkPods(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 10_000) throw new AppError(ErrorCodes.validationFailed, 'pod_limit must be an integer from 1 to 10000');
  return value;
}

export const DEFAULT_QUOTA = { cpu: '4', memory: '8Gi', pods: 50 } as const;

export interface CloudSpaceFields {
  name?: string | null;
  clusterId?: string | null;
  cpuLimit?: string | null;
  memoryLimit?: string | null;
  podLimit?: number | null;
}

/** A virtual cluster of a CloudSpace, read live from its Cluster API objects. */
export interface VirtualClusterView {
  name: string;
  phase: string;
  ready: boolean;
  isDefault: boolean;
  createdAt: string | null;
}

/** Quota object of a CloudSpace's namespace. */
export function quotaManifest(space: Pick<CloudSpace, 'namespace' | 'cpuLimit' | 'memoryLimit' | 'podLimit' | 'id' | 'tenantId'>) {
  return {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: QUOTA_NAME, namespace: space.namespace, labels: { [LABELS.tenant]: space.tenantId, [LABELS.cloudspace]: space.id } },
    spec: { hard: { 'requests.cpu': space.cpuLimit, 'requests.memory': space.memoryLimit, pods: String(space.podLimit) } },
  };
}

/** Declares a virtual cluster: the VCluster and the Cluster that points at it. */
export async function declareVirtualCluster(clients: KubeClients, space: Pick<CloudSpace, 'namespace' | 'id' | 'tenantId'>, name: string): Promise<void> {
  const labels = { [LABELS.tenant]: space.tenantId, [LABELS.cloudspace]: space.id };
  const ignoreExisting = (error: unknown) => {
    if (!isConflict(error)) throw error;
  };
  await clients.custom
    .createNamespacedCustomObject({ group: VCLUSTER.group, version: VCLUSTER.version, namespace: space.namespace, plural: VCLUSTER.plural, body: { apiVersion: `${VCLUSTER.group}/${VCLUSTER.version}`, kind: VCLUSTER.kind, metadata: { name, namespace: space.namespace, labels }, spec: {} } })
    .catch(ignoreExisting);
  await clients.custom
    .createNamespacedCustomObject({
      group: CAPI.group,
      version: CAPI.version,
      namespace: space.namespace,
      plural: CAPI.plural,
      body: { apiVersion: `${CAPI.group}/${CAPI.version}`, kind: 'Cluster', metadata: { name, namespace: space.namespace, labels }, spec: { infrastructureRef: { apiVersion: `${VCLUSTER.group}/${VCLUSTER.version}`, kind: VCLUSTER.kind, name } } },
    })
    .catch(ignoreExisting);
}

interface CapiCluster {
  metadata?: { name?: string; creationTimestamp?: string | Date; labels?: Record<string, string> };
  status?: { phase?: string };
}

/** CloudSpaces of the caller's tenant and their virtual clusters. */
export class CloudSpaceService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {}

  private get orchestrator(): Orchestrator {
    return requireOrchestrator(this.runtime);
  }

  private get logger(): Logger | undefined {
    return this.runtime.logger;
  }

  list(args: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<CloudSpace>> {
    return pageNewestFirst<CloudSpace>(this.em, CloudSpace, 'cloudspaces', {}, args);
  }

  get(id: string): Promise<CloudSpace> {
    return findByIdOrNotFound(this.em, CloudSpace, id, 'CloudSpace');
  }

  /**
   * Saves the CloudSpace as Pending; the reconciler provisions it (namespace, quota, default
   * virtual cluster) and emits `cloudspace.ready`. Without `cluster_id`, the tenant's own
   * provisioned cluster is used, else the platform's (the management cluster first).
   */
  async create(input: CloudSpaceFields & { name: string }): Promise<CloudSpace> {
    const tenantId = this.identity.tenantId;
    if (!tenantId) throw new AppError(ErrorCodes.validationFailed, 'CloudSpaces belong to a tenant; a platform-wide account has none');
    const name = checkDnsLabel(input.name, 'name', 40);
    const cluster = await this.placement(input.clusterId ?? null);
    const space = this.em.create(CloudSpace, {
      tenantId,
      name,
      clusterId: cluster.id,
      namespace: '',
      defaultVcluster: DEFAULT_VCLUSTER,
      cpuLimit: checkQuantity(input.cpuLimit ?? DEFAULT_QUOTA.cpu, 'cpu_limit'),
      memoryLimit: checkQuantity(input.memoryLimit ?? DEFAULT_QUOTA.memory, 'memory_limit'),
      podLimit: checkPods(input.podLimit ?? DEFAULT_QUOTA.pods),
      message: `waiting to be provisioned on cluster ${cluster.name}`,
    });
    space.namespace = `cs-${space.id.slice(0, 8)}-${name}`.slice(0, 63).replace(/-+$/, '');
    await conflictOnDuplicate(this.em.flush(), `a CloudSpace named ${name} already exists`);
    this.runtime.reconciler?.nudge();
    return space;
  }

  /** The cluster a new CloudSpace goes to. */
  private async placement(clusterId: string | null): Promise<Cluster> {
    if (clusterId) {
      const cluster = await findByIdOrNotFound(this.em, Cluster, clusterId, 'cluster', {}, { filters: false });
      if (cluster.tenantId !== null && cluster.tenantId !== this.identity.tenantId) throw new AppError(ErrorCodes.notFound, 'cluster not found');
      if (cluster.phase !== ClusterPhase.Provisioned) throw new AppError(ErrorCodes.conflict, `cluster ${cluster.name} is ${cluster.phase}, not Provisioned`);
      return cluster;
    }
    const candidates = await this.em.find(
      Cluster,
      { phase: ClusterPhase.Provisioned, $or: [{ tenantId: this.identity.tenantId }, { tenantId: null }] },
      { filters: false, orderBy: { createdAt: 'asc' } },
    );
    const rank = (c: Cluster) => (c.tenantId ? 0 : c.source === ClusterSource.self ? 1 : 2);
    const best = candidates.sort((a, b) => rank(a) - rank(b))[0];
    if (!best) throw new AppError(ErrorCodes.conflict, 'no provisioned cluster is available for a CloudSpace: connect or create one (POST /clusters), or ask an administrator to register the platform\'s own');
    return best;
  }

  /** Rename, or resize (the namespace's ResourceQuota, applied at once). */
  async update(id: string, input: CloudSpaceFields): Promise<CloudSpace> {
    const space = await this.get(id);
    if (space.status === CloudSpaceStatus.Deleting) throw new AppError(ErrorCodes.conflict, 'the CloudSpace is being deleted');
    if (input.clusterId) throw new AppError(ErrorCodes.validationFailed, 'a CloudSpace cannot move to another cluster');
    if (input.name !== undefined && input.name !== null) space.name = checkDnsLabel(input.name, 'name', 40);
    const resized = [input.cpuLimit, input.memoryLimit, input.podLimit].some((v) => v !== undefined && v !== null);
    if (input.cpuLimit) space.cpuLimit = checkQuantity(input.cpuLimit, 'cpu_limit');
    if (input.memoryLimit) space.memoryLimit = checkQuantity(input.memoryLimit, 'memory_limit');
    if (input.podLimit !== undefined && input.podLimit !== null) space.podLimit = checkPods(input.podLimit);
    space.updatedAt = new Date();
    if (resized && space.status === CloudSpaceStatus.Ready) {
      const clients = await this.clusterClients(space);
      try {
        await clients.core.replaceNamespacedResourceQuota({ name: QUOTA_NAME, namespace: space.namespace, body: quotaManifest(space) });
      } catch (error) {
        throw clusterUnavailable(`the cluster of CloudSpace ${space.name}`, error);
      }
    }
    await conflictOnDuplicate(this.em.flush(), `a CloudSpace named ${space.name} already exists`);
    return space;
  }

  /** Deleting: the reconciler removes the namespace (and so everything the CloudSpace created), then the row. */
  async remove(id: string): Promise<CloudSpace> {
    const space = await this.get(id);
    space.status = CloudSpaceStatus.Deleting;
    space.message = 'deleting its namespace and virtual clusters';
    space.leaseUntil = null;
    space.updatedAt = new Date();
    await this.em.flush();
    this.runtime.reconciler?.nudge();
    return space;
  }

  async clusterOf(space: CloudSpace): Promise<Cluster> {
    return findByIdOrNotFound(this.em, Cluster, space.clusterId, 'cluster', {}, { filters: false });
  }

  private async clusterClients(space: CloudSpace): Promise<KubeClients> {
    const cluster = await this.clusterOf(space);
    try {
      return await this.orchestrator.cluster(cluster);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw clusterUnavailable(`cluster ${cluster.name}`, error);
    }
  }

  private async readyOrConflict(id: string): Promise<CloudSpace> {
    const space = await this.get(id);
    if (space.status !== CloudSpaceStatus.Ready) throw new AppError(ErrorCodes.conflict, `CloudSpace ${space.name} is ${space.status}, not Ready`);
    return space;
  }

  async listVirtualClusters(id: string): Promise<VirtualClusterView[]> {
    const space = await this.readyOrConflict(id);
    const clients = await this.clusterClients(space);
    try {
      const list = (await clients.custom.listNamespacedCustomObject({ group: CAPI.group, version: CAPI.version, namespace: space.namespace, plural: CAPI.plural, labelSelector: `${LABELS.cloudspace}=${space.id}` })) as { items: CapiCluster[] };
      return list.items.map((c) => this.view(space, c)).sort((a, b) => a.name.localeCompare(b.name));
    } catch (error) {
      throw clusterUnavailable(`the cluster of CloudSpace ${space.name}`, error);
    }
  }

  async getVirtualCluster(id: string, name: string): Promise<VirtualClusterView> {
    const space = await this.readyOrConflict(id);
    const found = await this.readVirtualCluster(space, name);
    if (!found) throw new AppError(ErrorCodes.notFound, `virtual cluster ${name} not found`);
    return this.view(space, found);
  }

  private async readVirtualCluster(space: CloudSpace, name: string): Promise<CapiCluster | undefined> {
    if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(name)) return undefined;
    const clients = await this.clusterClients(space);
    try {
      const found = (await orUndefined(clients.custom.getNamespacedCustomObject({ group: CAPI.group, version: CAPI.version, namespace: space.namespace, plural: CAPI.plural, name }))) as CapiCluster | undefined;
      return found?.metadata?.labels?.[LABELS.cloudspace] === space.id ? found : undefined;
    } catch (error) {
      throw clusterUnavailable(`the cluster of CloudSpace ${space.name}`, error);
    }
  }

  private view(space: CloudSpace, c: CapiCluster): VirtualClusterView {
    const created = c.metadata?.creationTimestamp;
    return {
      name: c.metadata?.name ?? '',
      phase: c.status?.phase ?? 'Pending',
      ready: c.status?.phase === 'Provisioned',
      isDefault: c.metadata?.name === space.defaultVcluster,
      createdAt: created ? new Date(created).toISOString() : null,
    };
  }

  async addVirtualCluster(id: string, name: string): Promise<VirtualClusterView> {
    const space = await this.readyOrConflict(id);
    const vcName = checkDnsLabel(name, 'name', 40);
    if (await this.readVirtualCluster(space, vcName)) throw new AppError(ErrorCodes.conflict, `virtual cluster ${vcName} already exists`);
    const clients = await this.clusterClients(space);
    try {
      await declareVirtualCluster(clients, space, vcName);
    } catch (error) {
      throw clusterUnavailable(`the cluster of CloudSpace ${space.name}`, error);
    }
    return { name: vcName, phase: 'Pending', ready: false, isDefault: false, createdAt: new Date().toISOString() };
  }

  async removeVirtualCluster(id: string, name: string): Promise<void> {
    const space = await this.readyOrConflict(id);
    if (name === space.defaultVcluster) throw new AppError(ErrorCodes.conflict, 'the default virtual cluster goes with the CloudSpace; delete the CloudSpace instead');
    if (!(await this.readVirtualCluster(space, name))) throw new AppError(ErrorCodes.notFound, `virtual cluster ${name} not found`);
    const clients = await this.clusterClients(space);
    try {
      await clients.custom.deleteNamespacedCustomObject({ group: CAPI.group, version: CAPI.version, namespace: space.namespace, plural: CAPI.plural, name });
      await clients.custom.deleteNamespacedCustomObject({ group: VCLUSTER.group, version: VCLUSTER.version, namespace: space.namespace, plural: VCLUSTER.plural, name }).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
    } catch (error) {
      throw clusterUnavailable(`the cluster of CloudSpace ${space.name}`, error);
    }
    this.orchestrator.virtualClusters(await this.clusterOf(space)).drop(space.namespace, name);
  }

  /** The virtual cluster's kubeconfig: full access to it, so it is logged with who asked. */
  async kubeconfig(id: string, name: string): Promise<string> {
    const space = await this.readyOrConflict(id);
    if (!(await this.readVirtualCluster(space, name))) throw new AppError(ErrorCodes.notFound, `virtual cluster ${name} not found`);
    const cluster = await this.clusterOf(space);
    const kubeconfig = await this.orchestrator.virtualClusters(cluster).readKubeconfig(space.namespace, name);
    this.logger?.warn({ audit: 'vcluster.kubeconfig', subject: this.identity.subject, tenant: this.identity.tenantId, cloudspace: space.id, vcluster: name }, 'virtual cluster kubeconfig downloaded');
    return kubeconfig;
  }
}
