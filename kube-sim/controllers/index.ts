/** The simulated controllers of one cluster, started in dependency order. */
import type { SimCluster } from '../cluster.js';
import { startClusterApiController } from './cluster-api.js';
import { startDeploymentController } from './deployment.js';
import { startKubelet } from './kubelet.js';
import { startNamespaceController } from './namespaces.js';
import { startNodes } from './nodes.js';
import { startQuotaController } from './quota.js';
import { startReplicaSetController } from './replicaset.js';

export interface Controller {
  stop(): void;
}

export function startControllers(cluster: SimCluster): Controller[] {
  const controllers = [
    startNamespaceController(cluster),
    startQuotaController(cluster),
    startNodes(cluster),
    startKubelet(cluster),
    startReplicaSetController(cluster),
    startDeploymentController(cluster),
  ];
  if (cluster.options.virtualClusters) controllers.push(startClusterApiController(cluster, cluster.options.virtualClusters));
  return controllers;
}
