/**
 * The ReplicaSet controller: as many active pods as `spec.replicas`, created from the template
 * with an owner reference (named `<replicaset>-<5 characters>`), deleted not-ready and newest
 * first when scaling down, and the status counts kept current. A pod refused by admission (a
 * ResourceQuota) gives a `FailedCreate` event and the ReplicaFailure condition, and is retried.
 */
import type { SimCluster } from '../cluster.js';
import { StatusError } from '../status.js';
import { timestamp, type StoredObject } from '../types.js';
import { WorkQueue } from '../timers.js';
import { controllerOf, isPodActive, isPodReady, keyOf, ownedBy, ownerReference, setCondition, splitKey } from './ownership.js';
import type { Controller } from './index.js';

/** How long before a refused pod creation is tried again. */
const RETRY_MS = 1000;

export function startReplicaSetController(cluster: SimCluster): Controller {
  const replicaSets = cluster.type('replicasets.apps');
  const pods = cluster.type('pods');
  /** ReplicaSet uid → why its last pod creation failed. */
  const failures = new Map<string, string>();
  const queue = new WorkQueue('replicaset', cluster.timers, cluster.logger, reconcile);

  const unsubscribe = cluster.store.subscribe((change) => {
    if (change.storageKey === 'replicasets.apps') {
      if (change.type === 'DELETED') failures.delete(change.object.metadata.uid);
      else queue.add(keyOf(change.object));
    } else if (change.storageKey === 'pods') {
      const owner = controllerOf(change.object, 'ReplicaSet');
      if (owner) queue.add(`${change.namespace}/${owner.name}`);
    }
  });

  function reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const rs = cluster.find(replicaSets, namespace, name);
    if (!rs || rs.metadata.deletionTimestamp) return;
    const desired: number = rs.spec?.replicas ?? 1;
    const active = ownedBy(cluster, rs, 'pods').filter(isPodActive);

    if (active.length < desired) {
      failures.delete(rs.metadata.uid);
      for (let i = active.length; i < desired; i += 1) {
        try {
          const pod = cluster.create(pods, podFromTemplate(rs), { namespace });
          cluster.events.record(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, 'replicaset-controller');
        } catch (error) {
          if (!(error instanceof StatusError) || error.code === 409) throw error;
          failures.set(rs.metadata.uid, error.message);
          cluster.events.record(rs, 'Warning', 'FailedCreate', `Error creating: ${error.message}`, 'replicaset-controller');
          queue.addAfter(key, RETRY_MS);
          break;
        }
      }
    } else if (active.length > desired) {
      // Not ready before ready, then the newest first: what the controller manager prefers to lose.
      const ranked = [...active].sort((a, b) => {
        const ra = isPodReady(a) ? 1 : 0;
        const rb = isPodReady(b) ? 1 : 0;
        if (ra !== rb) return ra - rb;
        return b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp) || Number(b.metadata.resourceVersion) - Number(a.metadata.resourceVersion);
      });
      for (const pod of ranked.slice(0, active.length - desired)) {
        if (!cluster.find(pods, namespace, pod.metadata.name)) continue;
        cluster.delete(pods, namespace, pod.metadata.name);
        cluster.events.record(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, 'replicaset-controller');
      }
    }
    writeStatus(rs);
  }

  function writeStatus(rs: StoredObject): void {
    const current = ownedBy(cluster, rs, 'pods').filter(isPodActive);
    const ready = current.filter(isPodReady).length;
    const failure = failures.get(rs.metadata.uid);
    cluster.mutate(
      replicaSets,
      rs.metadata.namespace!,
      rs.metadata.name,
      (draft) => {
        let conditions = (draft.status?.conditions ?? []).filter((c: { type: string }) => c.type !== 'ReplicaFailure');
        if (failure) conditions = setCondition(conditions, { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: failure }, timestamp());
        draft.status = {
          replicas: current.length,
          fullyLabeledReplicas: current.length,
          readyReplicas: ready,
          availableReplicas: ready,
          observedGeneration: draft.metadata.generation,
          ...(conditions.length ? { conditions } : {}),
        };
        for (const k of ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'] as const) if (draft.status[k] === 0) delete draft.status[k];
      },
      { status: true },
    );
  }

  return { stop: unsubscribe };
}

function podFromTemplate(rs: StoredObject): unknown {
  const template = rs.spec?.template ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${rs.metadata.name}-`,
      namespace: rs.metadata.namespace,
      labels: { ...(template.metadata?.labels ?? {}) },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ownerReferences: [ownerReference(rs)],
    },
    spec: structuredClone(template.spec ?? {}),
  };
}
