/**
 * The Deployment controller, simplified: one ReplicaSet per pod template (named by the
 * template's hash, labelled `pod-template-hash`), `deployment.kubernetes.io/revision` raised on
 * every template change (a template seen before reuses its ReplicaSet, which gets the next
 * revision, as a rollback does in Kubernetes), old ReplicaSets scaled down as new pods become
 * ready, history trimmed to `revisionHistoryLimit`, and the status and conditions
 * (Available, Progressing, ProgressDeadlineExceeded) kept current.
 */
import type { SimCluster } from '../cluster.js';
import { canonical } from '../patch.js';
import { timestamp, type StoredObject } from '../types.js';
import { WorkQueue } from '../timers.js';
import { controllerOf, keyOf, ownedBy, ownerReference, setCondition, splitKey, type Condition } from './ownership.js';
import type { Controller } from './index.js';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
const DESIRED_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
const MAX_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const HASH_LABEL = 'pod-template-hash';

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** FNV-1a of the template, encoded as Kubernetes encodes `pod-template-hash` (rand.SafeEncodeString). */
export function templateHash(template: unknown): string {
  const text = JSON.stringify(canonical(template ?? {}));
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  let out = '';
  for (const ch of String(hash)) out += SAFE_ALPHABET[ch.charCodeAt(0) % SAFE_ALPHABET.length];
  return out;
}

const revisionOf = (rs: StoredObject): number => Number(rs.metadata.annotations?.[REVISION_ANNOTATION] ?? 0) || 0;

/** An int-or-percent of `total` (maxSurge rounds up, maxUnavailable down, as Kubernetes does). */
function scaled(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.endsWith('%')) {
    const exact = (Number(value.slice(0, -1)) * total) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
  }
  return Number(value ?? 0) || 0;
}

/** What the controller remembers of a rollout to tell progress from a stall. */
interface Progress {
  hash: string;
  /** When the rollout last made progress (ms). */
  at: number;
  updated: number;
  ready: number;
  available: number;
  /** Pods of older ReplicaSets still there. */
  old: number;
  complete: boolean;
}

export function startDeploymentController(cluster: SimCluster): Controller {
  const deployments = cluster.type('deployments.apps');
  const replicaSets = cluster.type('replicasets.apps');
  const progress = new Map<string, Progress>();
  const queue = new WorkQueue('deployment', cluster.timers, cluster.logger, reconcile);

  const unsubscribe = cluster.store.subscribe((change) => {
    if (change.storageKey === 'deployments.apps') {
      if (change.type === 'DELETED') progress.delete(change.object.metadata.uid);
      else queue.add(keyOf(change.object));
    } else if (change.storageKey === 'replicasets.apps') {
      const owner = controllerOf(change.object, 'Deployment');
      if (owner) queue.add(`${change.namespace}/${owner.name}`);
    }
  });

  function scaleReplicaSet(d: StoredObject, rs: StoredObject, to: number): StoredObject {
    const from = rs.spec?.replicas ?? 0;
    const updated = cluster.mutate(replicaSets, rs.metadata.namespace!, rs.metadata.name, (draft) => {
      draft.spec.replicas = to;
      draft.metadata.annotations = { ...draft.metadata.annotations, [DESIRED_ANNOTATION]: String(d.spec.replicas ?? 1) };
    })!;
    if (from !== to) {
      cluster.events.record(d, 'Normal', 'ScalingReplicaSet', `Scaled ${to > from ? 'up' : 'down'} replica set ${rs.metadata.name} from ${from} to ${to}`, 'deployment-controller');
    }
    return updated;
  }

  function reconcile(key: string): void {
    const [namespace, name] = splitKey(key);
    const d = cluster.find(deployments, namespace, name);
    if (!d || d.metadata.deletionTimestamp) return;
    const spec = d.spec ?? {};
    const desired: number = spec.replicas ?? 1;
    const paused = spec.paused === true;
    const recreate = spec.strategy?.type === 'Recreate';
    const hash = templateHash(spec.template);
    const now = Date.now();

    let owned = ownedBy(cluster, d, 'replicasets.apps');
    const maxRevision = owned.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
    let newRs = owned.find((rs) => rs.metadata.labels?.[HASH_LABEL] === hash);

    if (!paused) {
      if (!newRs) {
        const labels = { ...(spec.template?.metadata?.labels ?? {}), [HASH_LABEL]: hash };
        const maxSurge = recreate ? 0 : scaled(spec.strategy?.rollingUpdate?.maxSurge ?? '25%', desired, true);
        newRs = cluster.create(replicaSets, {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: `${name}-${hash}`,
            namespace,
            labels,
            annotations: { [REVISION_ANNOTATION]: String(maxRevision + 1), [DESIRED_ANNOTATION]: String(desired), [MAX_ANNOTATION]: String(desired + maxSurge) },
            ownerReferences: [ownerReference(d)],
          },
          spec: {
            replicas: 0,
            minReadySeconds: spec.minReadySeconds ?? 0,
            selector: { ...spec.selector, matchLabels: { ...(spec.selector?.matchLabels ?? {}), [HASH_LABEL]: hash } },
            template: { ...spec.template, metadata: { ...(spec.template?.metadata ?? {}), labels } },
          },
        });
        progress.delete(d.metadata.uid);
      } else if (revisionOf(newRs) < maxRevision) {
        // A template seen before: its ReplicaSet comes back with the next revision, and its old
        // number goes to revision-history, as `kubectl rollout undo` shows in Kubernetes.
        const old = revisionOf(newRs);
        newRs = cluster.mutate(replicaSets, namespace, newRs.metadata.name, (draft) => {
          const history = (draft.metadata.annotations?.[REVISION_HISTORY_ANNOTATION] ?? '').split(',').filter(Boolean);
          draft.metadata.annotations = {
            ...draft.metadata.annotations,
            [REVISION_ANNOTATION]: String(maxRevision + 1),
            [REVISION_HISTORY_ANNOTATION]: [...history, String(old)].join(','),
          };
        })!;
        progress.delete(d.metadata.uid);
      }

      if ((newRs.spec?.replicas ?? 0) !== desired) newRs = scaleReplicaSet(d, newRs, desired);

      // Old ReplicaSets keep as many pods as the new one still lacks ready ones (none for Recreate).
      const newReady: number = newRs.status?.readyReplicas ?? 0;
      let allowance = recreate ? 0 : Math.max(0, desired - newReady);
      const olds = owned.filter((rs) => rs.metadata.uid !== newRs!.metadata.uid).sort((a, b) => revisionOf(b) - revisionOf(a));
      for (const old of olds) {
        const current: number = old.spec?.replicas ?? 0;
        const target = Math.min(current, allowance);
        allowance -= target;
        if (target !== current) scaleReplicaSet(d, old, target);
      }

      const revision = String(revisionOf(newRs));
      if (d.metadata.annotations?.[REVISION_ANNOTATION] !== revision) {
        cluster.mutate(deployments, namespace, name, (draft) => {
          draft.metadata.annotations = { ...draft.metadata.annotations, [REVISION_ANNOTATION]: revision };
        });
      }

      // History beyond revisionHistoryLimit: the oldest scaled-down ReplicaSets go.
      owned = ownedBy(cluster, d, 'replicasets.apps');
      const limit: number = spec.revisionHistoryLimit ?? 10;
      const idle = owned
        .filter((rs) => rs.metadata.uid !== newRs!.metadata.uid && (rs.spec?.replicas ?? 0) === 0 && (rs.status?.replicas ?? 0) === 0)
        .sort((a, b) => revisionOf(a) - revisionOf(b));
      for (const rs of idle.slice(0, Math.max(0, idle.length - limit))) cluster.delete(replicaSets, namespace, rs.metadata.name);
    }

    writeStatus(d, hash, desired, paused, now);
  }

  function writeStatus(d: StoredObject, hash: string, desired: number, paused: boolean, now: number): void {
    const namespace = d.metadata.namespace!;
    const name = d.metadata.name;
    const owned = ownedBy(cluster, d, 'replicasets.apps');
    const newRs = owned.find((rs) => rs.metadata.labels?.[HASH_LABEL] === hash);
    const sum = (f: (rs: StoredObject) => number) => owned.reduce((s, rs) => s + f(rs), 0);
    const replicas = sum((rs) => rs.status?.replicas ?? 0);
    const ready = sum((rs) => rs.status?.readyReplicas ?? 0);
    const available = sum((rs) => rs.status?.availableReplicas ?? 0);
    const updated: number = newRs?.status?.replicas ?? 0;
    const newReady: number = newRs?.status?.readyReplicas ?? 0;
    const totalSpec = sum((rs) => rs.spec?.replicas ?? 0);

    const recreate = d.spec?.strategy?.type === 'Recreate';
    const maxUnavailable = recreate || desired === 0 ? 0 : scaled(d.spec?.strategy?.rollingUpdate?.maxUnavailable ?? '25%', desired, false);
    const complete = updated === desired && newReady >= desired && replicas === desired && available >= desired;

    // Progress as Kubernetes counts it (DeploymentProgressing): more updated, ready or available
    // pods, or fewer old ones; reaching completion counts too. A stall longer than the deadline
    // is ProgressDeadlineExceeded.
    const old = replicas - updated;
    let state = progress.get(d.metadata.uid);
    if (!state || state.hash !== hash) {
      state = { hash, at: now, updated, ready, available, old, complete };
      progress.set(d.metadata.uid, state);
    } else {
      if (updated > state.updated || ready > state.ready || available > state.available || old < state.old || (complete && !state.complete)) state.at = now;
      Object.assign(state, { updated, ready, available, old, complete });
    }
    const deadlineMs = (d.spec?.progressDeadlineSeconds ?? 600) * 1000 * cluster.options.progressDeadlineFactor;
    const stamp = timestamp(new Date(now));
    const rsName = newRs?.metadata.name ?? `${name}-${hash}`;

    let progressing: Condition;
    if (paused) {
      progressing = { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' };
    } else if (complete) {
      progressing = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${rsName}" has successfully progressed.` };
    } else if (now - state.at >= deadlineMs) {
      progressing = { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${rsName}" has timed out progressing.` };
    } else {
      progressing = { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `ReplicaSet "${rsName}" is progressing.` };
      queue.addAfter(`${namespace}/${name}`, Math.max(1, state.at + deadlineMs - now + 1));
    }
    if (!paused) progressing.lastUpdateTime = timestamp(new Date(state.at));

    const availableOk = available >= desired - maxUnavailable;
    const availableCondition = availableOk
      ? { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }
      : { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' };

    cluster.mutate(
      deployments,
      namespace,
      name,
      (draft) => {
        const previous = draft.status ?? {};
        let conditions = setCondition(previous.conditions, availableCondition, stamp, true);
        conditions = setCondition(conditions, progressing, stamp, true);
        draft.status = {
          observedGeneration: draft.metadata.generation,
          replicas,
          updatedReplicas: updated,
          readyReplicas: ready,
          availableReplicas: available,
          ...(Math.max(0, totalSpec - available) > 0 ? { unavailableReplicas: Math.max(0, totalSpec - available) } : {}),
          conditions,
        };
        // Zero counts are omitted on the wire by the API server (omitempty).
        for (const k of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas'] as const) if (draft.status[k] === 0) delete draft.status[k];
      },
      { status: true },
    );
  }

  return { stop: unsubscribe };
}
