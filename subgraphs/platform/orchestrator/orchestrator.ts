import { KubeConfig } from '@kubernetes/client-node';
import type { SecretBox } from '../../../kernel/crypto.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { ClusterSource, type Cluster } from '../clusters/cluster.entity.js';
import { clientsFor, orUndefined, VirtualClusterClients, type KubeClients } from './kube.js';

export const kubeconfigPurpose = (clusterId: string) => `platform.cluster.kubeconfig:${clusterId}`;

/**
 * Where the platform's Kubernetes calls go: the management (host) cluster, each managed cluster
 * (the host itself, a connected cluster's sealed kubeconfig, or a Cluster API cluster's
 * kubeconfig Secret), and the virtual clusters of CloudSpaces on them.
 */
export class Orchestrator {
  private readonly hostClients: KubeClients | undefined;
  private readonly clusterClients = new Map<string, { key: string; clients: KubeClients }>();
  private readonly virtualClients = new Map<string, VirtualClusterClients>();

  constructor(
    hostKubeConfig: KubeConfig | undefined,
    private readonly box: SecretBox,
    readonly clusterApiNamespace: string,
  ) {
    this.hostClients = hostKubeConfig ? clientsFor(hostKubeConfig) : undefined;
  }

  get configured(): boolean {
    return this.hostClients !== undefined;
  }

  /** The management cluster; 503 when none is configured. */
  host(): KubeClients {
    if (!this.hostClients) throw new AppError(ErrorCodes.upstreamUnavailable, 'no Kubernetes management cluster is configured (KUBECONFIG)');
    return this.hostClients;
  }

  /** Clients of a managed cluster. */
  async cluster(cluster: Cluster): Promise<KubeClients> {
    if (cluster.source === ClusterSource.self) return this.host();
    const key = `${cluster.source}:${cluster.updatedAt.getTime()}`;
    const hit = this.clusterClients.get(cluster.id);
    if (hit && hit.key === key) return hit.clients;
    const kc = new KubeConfig();
    if (cluster.source === ClusterSource.connected) {
      if (!cluster.kubeconfigSealed) throw new AppError(ErrorCodes.conflict, `cluster ${cluster.name} has no kubeconfig`);
      kc.loadFromString(this.box.open(cluster.kubeconfigSealed, kubeconfigPurpose(cluster.id)));
    } else {
      const secret = await orUndefined(this.host().core.readNamespacedSecret({ namespace: this.clusterApiNamespace, name: `${cluster.capiName}-kubeconfig` }));
      const value = secret?.data?.value;
      if (!value) throw new AppError(ErrorCodes.conflict, `cluster ${cluster.name} has no kubeconfig yet (phase ${cluster.phase})`);
      kc.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
    }
    const clients = clientsFor(kc);
    this.clusterClients.set(cluster.id, { key, clients });
    return clients;
  }

  /** Virtual clusters living on `cluster` (their kubeconfig Secrets are there). */
  virtualClusters(cluster: Cluster): VirtualClusterClients {
    let cache = this.virtualClients.get(cluster.id);
    if (!cache) {
      cache = new VirtualClusterClients(() => this.cluster(cluster));
      this.virtualClients.set(cluster.id, cache);
    }
    return cache;
  }

  forget(clusterId: string): void {
    this.clusterClients.delete(clusterId);
    this.virtualClients.delete(clusterId);
  }
}
