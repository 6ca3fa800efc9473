/** Every namespace gets its `default` ServiceAccount, as the service account controller gives it. */
import type { SimCluster } from '../cluster.js';
import { WorkQueue } from '../timers.js';
import type { Controller } from './index.js';

export function startNamespaceController(cluster: SimCluster): Controller {
  const serviceAccounts = cluster.type('serviceaccounts');
  const queue = new WorkQueue('namespace', cluster.timers, cluster.logger, (namespace) => {
    if (!cluster.store.get('namespaces', '', namespace) || cluster.find(serviceAccounts, namespace, 'default')) return;
    cluster.create(serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } });
  });
  const unsubscribe = cluster.store.subscribe((change) => {
    if (change.storageKey === 'namespaces' && change.type === 'ADDED') queue.add(change.object.metadata.name);
    if (change.storageKey === 'serviceaccounts' && change.type === 'DELETED' && change.object.metadata.name === 'default') queue.add(change.namespace);
  });
  return { stop: unsubscribe };
}
