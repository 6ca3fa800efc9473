/** What the controllers share: owner references and pod readiness. */
import type { SimCluster } from '../cluster.js';
import type { OwnerReference, StoredObject } from '../types.js';

/** The owner reference marked `controller: true`, if it is of `kind`. */
export function controllerOf(object: StoredObject, kind: string): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((r) => r.controller === true && r.kind === kind);
}

/** Objects stored under `storageKey` whose controller is `owner` (found through the owner index, no scan). */
export function ownedBy(cluster: SimCluster, owner: StoredObject, storageKey: string): StoredObject[] {
  const out: StoredObject[] = [];
  for (const dep of cluster.store.dependentsOf(owner.metadata.uid)) {
    if (dep.storageKey !== storageKey) continue;
    const object = cluster.store.get(dep.storageKey, dep.namespace, dep.name);
    if (object && object.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === owner.metadata.uid)) out.push(object);
  }
  return out;
}

export function ownerReference(owner: StoredObject): OwnerReference {
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true };
}

export function isPodReady(pod: StoredObject): boolean {
  return (pod.status?.conditions as { type: string; status: string }[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function isPodActive(pod: StoredObject): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

export const keyOf = (object: StoredObject): string => `${object.metadata.namespace ?? ''}/${object.metadata.name}`;

export function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return [key.slice(0, i), key.slice(i + 1)];
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  [key: string]: unknown;
}

/**
 * A condition list with `condition` set. `lastTransitionTime` moves only when the status changes;
 * with `withUpdateTime` (Deployment conditions), `lastUpdateTime` moves when status, reason or
 * message change, unless the condition brings its own. Stable timestamps keep controllers
 * idempotent: a reconcile that finds nothing new writes nothing.
 */
export function setCondition(conditions: Condition[] | undefined, condition: Condition, now: string, withUpdateTime = false): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === condition.type);
  const previous = index >= 0 ? list[index] : undefined;
  const same = previous !== undefined && previous.status === condition.status && previous.reason === condition.reason && previous.message === condition.message;
  const next: Condition = { ...condition, lastTransitionTime: previous && previous.status === condition.status ? previous.lastTransitionTime : now };
  if (withUpdateTime) next.lastUpdateTime = condition.lastUpdateTime ?? (same ? previous.lastUpdateTime : now);
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}
