import type { EntityManager } from '@mikro-orm/postgresql';
import { conflictOnDuplicate, findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { hasRole, ROLES, type Identity } from '../../../kernel/identity.js';
import { pageNewestFirst, type PageOfRows } from '../../../kernel/pagination.js';
import { CloudSpace } from '../cloudspaces/cloudspace.entity.js';
import { queuePlatformEvent, queueWorkflowManagerNotice } from '../events.js';
import { clusterUnavailable, isConflict, isNotFound, parseKubeconfig, clientsFor, type KubeClients } from '../orchestrator/kube.js';
import { kubeconfigPurpose, type Orchestrator } from '../orchestrator/orchestrator.js';
import { requireOrchestrator, type PlatformRuntime } from '../runtime.js';
import { Cluster, ClusterPhase, ClusterSource, type ClusterNodes } from './cluster.entity.js';

export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export function checkDnsLabel(value: string | null | undefined, field: string, max = 63): string {
  const v = (value ?? '').trim();
  if (!DNS_LABEL.test(v) || v.length > max) {
    throw new AppError(ErrorCodes.validationFailed, `${field} must be a DNS label: lower-case letters, digits and "-", starting and ending with a letter or digit, at most ${max} characters`);
  }
  return v;
}

export interface CreateClusterFields {
  name: string;
  /** Connect an existing cluster with this kubeconfig (YAML or JSON). */
  kubeconfig?: string | null;
  /** Otherwise create one through Cluster API with this infrastructure. */
  infrastructureKind?: string | null;
  kubernetesVersion?: string | null;
  workerNodes?: number | null;
}

/** Cluster API groups and versions the platform writes. */
export const CAPI = { group: 'cluster.x-k8s.io', version: 'v1beta1', plural: 'clusters' } as const;
export const INFRA_GROUP = 'infrastructure.cluster.x-k8s.io';
const INFRA_KINDS: Record<string, { version: string; plural: string }> = {
  DockerCluster: { version: 'v1beta1', plural: 'dockerclusters' },
  AWSCluster: { version: 'v1beta2', plural: 'awsclusters' },
  AzureCluster: { version: 'v1beta1', plural: 'azureclusters' },
  GCPCluster: { version: 'v1beta1', plural: 'gcpclusters' },
};

/** The workflow-manager notice and event payload of a cluster. */
export const clusterSummary = (c: Cluster) => ({ id: c.id, tenant_id: c.tenantId, name: c.name, source: c.source, phase: c.phase });

/** Clusters of the caller's tenant (a platform administrator without a tenant sees and makes platform-wide ones). */
export class ClusterService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {}

  private get orchestrator(): Orchestrator {
    return requireOrchestrator(this.runtime);
  }

  list(args: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<Cluster>> {
    return pageNewestFirst<Cluster>(this.em, Cluster, 'clusters', {}, args);
  }

  get(id: string): Promise<Cluster> {
    return findByIdOrNotFound(this.em, Cluster, id, 'cluster');
  }

  /** Detail with live node counts (null when the cluster cannot be reached right now). */
  async detail(id: string): Promise<Cluster> {
    const cluster = await this.get(id);
    cluster.nodes = cluster.phase === ClusterPhase.Provisioned ? await this.nodeCounts(cluster).catch(() => null) : null;
    return cluster;
  }

  private async nodeCounts(cluster: Cluster): Promise<ClusterNodes> {
    const clients = await this.orchestrator.cluster(cluster);
    const nodes = await clients.core.listNode({ timeoutSeconds: 5 });
    const ready = nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    return { total: nodes.items.length, ready };
  }

  async create(input: CreateClusterFields): Promise<Cluster> {
    const name = checkDnsLabel(input.name, 'name');
    if (input.kubeconfig) return this.connect(name, input.kubeconfig);
    return this.createThroughClusterApi(name, input);
  }

  /** An existing cluster: its API must answer with the kubeconfig given, which is then sealed. */
  private async connect(name: string, kubeconfig: string): Promise<Cluster> {
    if (kubeconfig.length > 256 * 1024) throw new AppError(ErrorCodes.validationFailed, 'kubeconfig is larger than 256 KiB');
    const clients = clientsFor(parseKubeconfig(kubeconfig));
    const version = await this.verify(clients, 'the cluster');
    const cluster = this.em.create(Cluster, { tenantId: this.identity.tenantId, name, source: ClusterSource.connected, phase: ClusterPhase.Provisioned, kubernetesVersion: version, message: 'connected', provisionedAt: new Date() });
    cluster.kubeconfigSealed = this.runtime.box.seal(kubeconfig, kubeconfigPurpose(cluster.id));
    return this.saveNew(cluster, 'connected');
  }

  /** The management cluster itself, once (platform administrators). */
  async registerSelf(name = 'management'): Promise<Cluster> {
    if (this.identity.tenantId !== null || !hasRole(this.identity, ROLES.superAdmin)) {
      throw new AppError(ErrorCodes.forbidden, 'only a platform administrator (super_admin without a tenant) registers the management cluster');
    }
    const existing = await this.em.findOne(Cluster, { source: ClusterSource.self });
    if (existing) return existing;
    const version = await this.verify(this.orchestrator.host(), 'the management cluster');
    const cluster = this.em.create(Cluster, { tenantId: null, name: checkDnsLabel(name, 'name'), source: ClusterSource.self, phase: ClusterPhase.Provisioned, kubernetesVersion: version, message: 'the cluster the platform runs on', provisionedAt: new Date() });
    return this.saveNew(cluster, 'registered');
  }

  private async createThroughClusterApi(name: string, input: CreateClusterFields): Promise<Cluster> {
    const kind = input.infrastructureKind ?? 'DockerCluster';
    const infra = INFRA_KINDS[kind];
    if (!infra) throw new AppError(ErrorCodes.validationFailed, `infrastructure_kind must be one of ${Object.keys(INFRA_KINDS).join(', ')}`);
    const workers = input.workerNodes ?? 3;
    if (!Number.isInteger(workers) || workers < 1 || workers > 100) throw new AppError(ErrorCodes.validationFailed, 'worker_nodes must be 1 to 100');
    const version = input.kubernetesVersion ?? 'v1.30.0';
    if (!/^v1\.\d{1,2}\.\d{1,3}$/.test(version)) throw new AppError(ErrorCodes.validationFailed, 'kubernetes_version must look like v1.30.0');
    const cluster = this.em.create(Cluster, { tenantId: this.identity.tenantId, name, source: ClusterSource.cluster_api, phase: ClusterPhase.Pending, infrastructureKind: kind, kubernetesVersion: version, message: 'declared through Cluster API' });
    cluster.capiName = `cl-${cluster.id.slice(0, 8)}`;
    const { custom, core } = this.orchestrator.host();
    const namespace = this.orchestrator.clusterApiNamespace;
    const labels = { 'cloudops.dev/cluster-id': cluster.id, ...(cluster.tenantId ? { 'cloudops.dev/tenant': cluster.tenantId } : {}) };
    try {
      await core.createNamespace({ body: { metadata: { name: namespace } } }).catch((error: unknown) => {
        if (!isConflict(error)) throw error;
      });
      await custom.createNamespacedCustomObject({
        group: INFRA_GROUP,
        version: infra.version,
        namespace,
        plural: infra.plural,
        body: { apiVersion: `${INFRA_GROUP}/${infra.version}`, kind, metadata: { name: cluster.capiName, namespace, labels }, spec: {} },
      });
      await custom.createNamespacedCustomObject({
        group: CAPI.group,
        version: CAPI.version,
        namespace,
        plural: CAPI.plural,
        body: {
          apiVersion: `${CAPI.group}/${CAPI.version}`,
          kind: 'Cluster',
          metadata: { name: cluster.capiName, namespace, labels: { ...labels, 'cloudops.dev/cluster-name': name } },
          spec: { infrastructureRef: { apiVersion: `${INFRA_GROUP}/${infra.version}`, kind, name: cluster.capiName }, topology: { version, workers: { replicas: workers } } },
        },
      });
    } catch (error) {
      throw clusterUnavailable('the management cluster', error);
    }
    return this.saveNew(cluster, 'registered');
  }

  private async verify(clients: KubeClients, what: string): Promise<string> {
    try {
      const info = await clients.version.getCode();
      return info.gitVersion;
    } catch (error) {
      throw new AppError(ErrorCodes.validationFailed, `${what} did not answer: ${clusterUnavailable('its API server', error).message}`);
    }
  }

  private async saveNew(cluster: Cluster, notice: 'registered' | 'connected'): Promise<Cluster> {
    queuePlatformEvent(this.em, 'cluster.phase_changed', cluster.tenantId, { cluster_id: cluster.id, cluster_name: cluster.name, phase: cluster.phase, previous_phase: null, message: cluster.message });
    queueWorkflowManagerNotice(this.em, this.runtime, notice, clusterSummary(cluster));
    await conflictOnDuplicate(this.em.flush(), `a cluster named ${cluster.name} already exists`);
    this.runtime.relays?.forEach((r) => r.nudge());
    return cluster;
  }

  /**
   * Disconnects a connected or self-registered cluster (it keeps running; the platform forgets
   * it), or deletes a created one (Deleting until Cluster API has removed it). Refused while
   * CloudSpaces live on it.
   */
  async remove(id: string): Promise<Cluster> {
    const cluster = await this.get(id);
    const spaces = await this.em.count(CloudSpace, { clusterId: cluster.id }, { filters: false });
    if (spaces > 0) throw new AppError(ErrorCodes.conflict, `cluster ${cluster.name} hosts ${spaces} CloudSpace(s); delete them first`);
    if (cluster.phase === ClusterPhase.Deleting) return cluster;
    const previous = cluster.phase;
    cluster.phase = ClusterPhase.Deleting;
    cluster.updatedAt = new Date();
    queuePlatformEvent(this.em, 'cluster.phase_changed', cluster.tenantId, { cluster_id: cluster.id, cluster_name: cluster.name, phase: ClusterPhase.Deleting, previous_phase: previous, message: cluster.source === ClusterSource.cluster_api ? 'deleting' : 'disconnecting' });
    if (cluster.source === ClusterSource.cluster_api) {
      try {
        await this.orchestrator.host().custom.deleteNamespacedCustomObject({ group: CAPI.group, version: CAPI.version, namespace: this.orchestrator.clusterApiNamespace, plural: CAPI.plural, name: cluster.capiName! });
      } catch (error) {
        if (!isNotFound(error)) throw clusterUnavailable('the management cluster', error);
      }
      cluster.message = 'deleting through Cluster API';
      await this.em.flush();
    } else {
      queueWorkflowManagerNotice(this.em, this.runtime, 'removed', clusterSummary(cluster));
      this.em.remove(cluster);
      await this.em.flush();
      this.runtime.orchestrator?.forget(cluster.id);
    }
    this.runtime.relays?.forEach((r) => r.nudge());
    return cluster;
  }
}
