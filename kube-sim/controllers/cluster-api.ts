/**
 * Cluster API, simulated on the host cluster: a `Cluster` (cluster.x-k8s.io/v1beta1) goes
 * Pending → Provisioning → Provisioned, one phase per `clusterPhaseDelayMs`. When its
 * `spec.infrastructureRef.kind` is `VCluster`, kube-sim starts a virtual cluster of its own for
 * it, marks the VCluster object ready and writes the Secret `<cluster>-kubeconfig` (key `value`)
 * with a kubeconfig for that virtual cluster, before the Cluster turns Provisioned. Other
 * infrastructure objects (DockerCluster...) are only marked ready.
 *
 * Deleting a Cluster shows phase Deleting for one delay (the finalizer
 * `cluster.cluster.x-k8s.io` holds it), then removes the virtual cluster, the Secret and the
 * infrastructure object. The annotation `kube-sim.cloudops.dev/fail: "true"` sends the Cluster
 * to phase Failed.
 */
import type { SimCluster, VirtualClusterProvider } from '../cluster.js';
import { timestamp, type StoredObject } from '../types.js';
import { WorkQueue } from '../timers.js';
import { keyOf, setCondition, splitKey, type Condition } from './ownership.js';
import type { Controller } from './index.js';

export const FAIL_ANNOTATION = 'kube-sim.cloudops.dev/fail';
export const CLUSTER_FINALIZER = 'cluster.cluster.x-k8s.io';
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

type Phase = 'Pending' | 'Provisioning' | 'Provisioned' | 'Deleting';

interface Step {
  phase: Phase;
  /** When the phase began (ms). */
  at: number;
}

const NEXT: Partial<Record<Phase, Phase>> = { Pending: 'Provisioning', Provisioning: 'Provisioned' };

export function startClusterApiController(cluster: SimCluster, provider: VirtualClusterProvider): Controller {
  const clusters = cluster.type('clusters.cluster.x-k8s.io');
  const secrets = cluster.type('secrets');
  const delay = cluster.options.clusterPhaseDelayMs;
  const steps = new Map<string, Step>();

  const queue = new WorkQueue('cluster-api', cluster.timers, cluster.logger, reconcile);
  const teardownQueue = new WorkQueue('cluster-api-teardown', cluster.timers, cluster.logger, (key) => {
    const [namespace, name] = splitKey(key);
    if (!cluster.find(clusters, namespace, name)) teardown(namespace, name, undefined);
  });

  const unsubscribe = cluster.store.subscribe((change) => {
    if (change.storageKey !== 'clusters.cluster.x-k8s.io') return;
    if (change.type === 'DELETED') {
      steps.delete(change.object.metadata.uid);
      teardownQueue.add(keyOf(change.object));
    } else {
      queue.add(keyOf(change.object));
    }
  });

  function infrastructureType(c: StoredObject) {
    const ref = c.spec?.infrastructureRef as { apiVersion?: string; kind?: string; name?: string } | undefined;
    if (!ref?.kind || !ref.name) return undefined;
    const type = ref.apiVersion ? cluster.registry.lookupKind(ref.apiVersion, ref.kind) : undefined;
    return { ref: ref as { kind: string; name: string }, type };
  }

  function writeStatus(c: StoredObject, phase: Phase | 'Failed'): void {
    const now = timestamp();
    const ready = phase === 'Provisioned';
    const failed = phase === 'Failed';
    const waiting = (type: string, reason: string): Condition => ({ type, status: 'False', reason, severity: failed ? 'Error' : 'Info' });
    cluster.mutate(
      clusters,
      c.metadata.namespace!,
      c.metadata.name,
      (draft) => {
        let conditions: Condition[] = draft.status?.conditions ?? [];
        conditions = setCondition(conditions, ready ? { type: 'Ready', status: 'True' } : waiting('Ready', failed ? 'SimulatedFailure' : phase === 'Deleting' ? 'Deleting' : 'WaitingForInfrastructure'), now);
        conditions = setCondition(conditions, ready ? { type: 'InfrastructureReady', status: 'True' } : waiting('InfrastructureReady', failed ? 'SimulatedFailure' : 'WaitingForInfrastructure'), now);
        conditions = setCondition(conditions, ready ? { type: 'ControlPlaneReady', status: 'True' } : waiting('ControlPlaneReady', failed ? 'SimulatedFailure' : 'WaitingForControlPlane'), now);
        const keepReady = phase === 'Deleting' && draft.status?.infrastructureReady === true;
        draft.status = {
          phase,
          infrastructureReady: ready || keepReady,
          controlPlaneReady: ready || keepReady,
          observedGeneration: draft.metadata.generation,
          conditions,
          ...(failed
            ? { failureReason: 'SimulatedFailure', failureMessage: `kube-sim: the annotation ${FAIL_ANNOTATION}: "true" asks this cluster to fail` }
            : {}),
        };
      },
      { status: true },
    );
  }

  function markInfrastructureReady(c: StoredObject): void {
    const infra = infrastructureType(c);
    if (!infra?.type) return;
    const object = cluster.find(infra.type, c.metadata.namespace!, infra.ref.name);
    if (!object) return;
    const now = timestamp();
    cluster.mutate(
      infra.type,
      c.metadata.namespace!,
      infra.ref.name,
      (draft) => {
        draft.status = {
          ...draft.status,
          ready: true,
          initialized: true,
          ...(infra.ref.kind === 'VCluster' ? { phase: 'Deployed' } : {}),
          conditions: setCondition(draft.status?.conditions, { type: 'Ready', status: 'True' }, now),
        };
      },
      { status: true },
    );
  }

  function writeKubeconfigSecret(c: StoredObject, kubeconfig: string): void {
    const namespace = c.metadata.namespace!;
    const name = `${c.metadata.name}-kubeconfig`;
    const value = Buffer.from(kubeconfig).toString('base64');
    const existing = cluster.find(secrets, namespace, name);
    if (existing) {
      if ((existing.data as Record<string, string> | undefined)?.value !== value) {
        cluster.mutate(secrets, namespace, name, (draft) => void (draft.data = { ...(draft.data as Record<string, string>), value }));
      }
      return;
    }
    cluster.create(secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace,
        labels: { [CLUSTER_NAME_LABEL]: c.metadata.name },
        ownerReferences: [{ apiVersion: c.apiVersion, kind: c.kind, name: c.metadata.name, uid: c.metadata.uid, controller: true }],
      },
      type: 'cluster.x-k8s.io/secret',
      data: { value },
    });
  }

  function teardown(namespace: string, name: string, c: StoredObject | undefined): void {
    provider.remove(namespace, name);
    if (cluster.find(secrets, namespace, `${name}-kubeconfig`)) cluster.delete(secrets, namespace, `${name}-kubeconfig`);
    const infra = c ? infrastructureType(c) : undefined;
    if (infra?.type && cluster.find(infra.type, namespace, infra.ref.name)) cluster.delete(infra.type, namespace, infra.ref.name);
  }

  function reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const c = cluster.find(clusters, namespace, name);
    if (!c) return;
    const now = Date.now();
    let step = steps.get(c.metadata.uid);

    if (c.metadata.deletionTimestamp) {
      if (!(c.metadata.finalizers ?? []).includes(CLUSTER_FINALIZER)) return;
      if (step?.phase !== 'Deleting') {
        steps.set(c.metadata.uid, { phase: 'Deleting', at: now });
        writeStatus(c, 'Deleting');
        queue.addAfter(key, delay);
        return;
      }
      if (now - step.at < delay) {
        queue.addAfter(key, delay - (now - step.at));
        return;
      }
      teardown(namespace, name, c);
      cluster.mutate(clusters, namespace, name, (draft) => {
        draft.metadata.finalizers = (draft.metadata.finalizers ?? []).filter((f) => f !== CLUSTER_FINALIZER);
      });
      return;
    }

    if (!(c.metadata.finalizers ?? []).includes(CLUSTER_FINALIZER)) {
      cluster.mutate(clusters, namespace, name, (draft) => {
        draft.metadata.finalizers = [...(draft.metadata.finalizers ?? []), CLUSTER_FINALIZER];
      });
      return;
    }

    if (c.metadata.annotations?.[FAIL_ANNOTATION] === 'true') {
      writeStatus(c, 'Failed');
      return;
    }

    if (!step) {
      // A Cluster that says Provisioned already (kube-sim restored from a snapshot) stays so:
      // controllers resume from status, they do not provision again.
      step = { phase: c.status?.phase === 'Provisioned' ? 'Provisioned' : 'Pending', at: now };
      steps.set(c.metadata.uid, step);
    } else if (NEXT[step.phase] && now - step.at >= delay) {
      step = { phase: NEXT[step.phase]!, at: now };
      steps.set(c.metadata.uid, step);
    }

    if (step.phase === 'Provisioned') {
      // The kubeconfig exists before the Cluster says Provisioned, so a client waiting for the
      // phase can read the Secret at once.
      if (infrastructureType(c)?.ref.kind === 'VCluster') writeKubeconfigSecret(c, provider.ensure(namespace, name).kubeconfig);
      markInfrastructureReady(c);
    } else {
      queue.addAfter(key, Math.max(0, delay - (now - step.at)));
    }
    writeStatus(c, step.phase);
  }

  return {
    stop: () => {
      unsubscribe();
    },
  };
}
