/**
 * Discovery of virtual clusters from the host cluster: every Cluster API kubeconfig Secret
 * (`<cluster>-kubeconfig`, key `value`, label `cluster.x-k8s.io/cluster-name`) in any namespace.
 * Used by the local applier (to find virtual clusters whose folder disappeared) and as a ready-made
 * resolver for the local ingress.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** The label Cluster API (and kube-sim) put on a cluster's kubeconfig Secret. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** One virtual cluster and a KubeConfig for it. */
export interface VirtualClusterEntry {
  /** The host namespace holding the Cluster (the CloudSpace's namespace). */
  namespace: string;
  /** The Cluster's name. */
  name: string;
  kubeConfig: KubeConfig;
}

/**
 * A resolver answering the virtual clusters the host currently has kubeconfig Secrets for. The
 * KubeConfig of a Secret is kept (same object) until the Secret changes, so callers may cache
 * clients by identity.
 */
export function virtualClustersFromHost(hostKubeConfig: KubeConfig): () => Promise<VirtualClusterEntry[]> {
  const core = hostKubeConfig.makeApiClient(CoreV1Api);
  const known = new Map<string, { version: string; entry: VirtualClusterEntry }>();
  return async () => {
    const list = await core.listSecretForAllNamespaces({ labelSelector: CLUSTER_NAME_LABEL });
    const seen = new Set<string>();
    const out: VirtualClusterEntry[] = [];
    for (const secret of list.items) {
      const namespace = secret.metadata?.namespace;
      const cluster = secret.metadata?.labels?.[CLUSTER_NAME_LABEL];
      const value = secret.data?.value;
      if (!namespace || !cluster || !value || secret.metadata?.name !== `${cluster}-kubeconfig`) continue;
      const key = `${namespace}/${cluster}`;
      const version = secret.metadata?.resourceVersion ?? value;
      seen.add(key);
      let hit = known.get(key);
      if (!hit || hit.version !== version) {
        const kubeConfig = new KubeConfig();
        try {
          kubeConfig.loadFromString(Buffer.from(value, 'base64').toString('utf8'));
        } catch {
          continue;
        }
        hit = { version, entry: { namespace, name: cluster, kubeConfig } };
        known.set(key, hit);
      }
      out.push(hit.entry);
    }
    for (const key of known.keys()) if (!seen.has(key)) known.delete(key);
    return out;
  };
}
