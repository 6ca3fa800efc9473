/**
 * Where one simulated cluster keeps its objects: indexed by resource and namespace (no request
 * scans every object), one resourceVersion counter for every kind, as etcd's revision is, a
 * bounded history per resource for watches resuming from a resourceVersion, and the fan-out of
 * changes to watches and to the simulated controllers.
 *
 * The store knows nothing of Kubernetes rules beyond resourceVersion; `cluster.ts` applies them.
 * Stored objects are never mutated: every write stores a new object, so readers may keep them.
 */
import { errors } from './status.js';
import type { StoredObject, WatchEventType } from './types.js';

export interface Change {
  type: WatchEventType;
  storageKey: string;
  namespace: string;
  /** The new state; for DELETED, the last state carrying the deletion's resourceVersion. */
  object: StoredObject;
  /** The state before a MODIFIED change. */
  previous?: StoredObject;
  rv: number;
}

/** One open watch: where its events go and which objects it selects. */
export interface WatchSink {
  /** Only objects of this namespace; undefined for every namespace. */
  namespace?: string;
  matches(object: StoredObject): boolean;
  send(type: WatchEventType, object: StoredObject): void;
}

interface History {
  changes: Change[];
  /** The resourceVersion of the newest change dropped from `changes`; older versions are expired. */
  compactedRv: number;
}

const json = new WeakMap<object, string>();

/** The JSON of a stored object, computed once per object version and shared by every reader. */
export function toJson(object: object): string {
  let text = json.get(object);
  if (text === undefined) {
    text = JSON.stringify(object);
    json.set(object, text);
  }
  return text;
}

const listJson = new WeakMap<object, string>();

/**
 * The JSON of a built-in object as a list item: the API server leaves `kind` and `apiVersion`
 * out of the items of a typed list (custom resources keep them), and clients should not rely on them.
 */
export function toListItemJson(object: StoredObject): string {
  let text = listJson.get(object);
  if (text === undefined) {
    text = JSON.stringify({ ...object, apiVersion: undefined, kind: undefined });
    listJson.set(object, text);
  }
  return text;
}

const dependentKey = (storageKey: string, namespace: string, name: string) => `${storageKey}\u0000${namespace}\u0000${name}`;

export class ObjectStore {
  private rv = 0;
  private readonly objects = new Map<string, Map<string, Map<string, StoredObject>>>();
  /** owner uid → dependents, for garbage collection by ownerReferences. */
  private readonly dependents = new Map<string, Set<string>>();
  private readonly histories = new Map<string, History>();
  private readonly listeners = new Set<(change: Change) => void>();
  private readonly watchers = new Map<string, Set<WatchSink>>();

  /** @param historyLimit changes kept per resource for watches resuming from a resourceVersion */
  constructor(private readonly historyLimit: number) {}

  currentRv(): number {
    return this.rv;
  }

  get(storageKey: string, namespace: string, name: string): StoredObject | undefined {
    return this.objects.get(storageKey)?.get(namespace)?.get(name);
  }

  /** Objects of a resource in one namespace (`''` for cluster-scoped ones), or in all when undefined. */
  list(storageKey: string, namespace?: string): StoredObject[] {
    const byNamespace = this.objects.get(storageKey);
    if (!byNamespace) return [];
    if (namespace !== undefined) return [...(byNamespace.get(namespace)?.values() ?? [])];
    const out: StoredObject[] = [];
    for (const names of byNamespace.values()) for (const o of names.values()) out.push(o);
    return out;
  }

  count(storageKey: string, namespace: string): number {
    return this.objects.get(storageKey)?.get(namespace)?.size ?? 0;
  }

  /** Objects naming `uid` in their ownerReferences. */
  dependentsOf(uid: string): { storageKey: string; namespace: string; name: string }[] {
    return [...(this.dependents.get(uid) ?? [])].map((key) => {
      const [storageKey, namespace, name] = key.split('\u0000') as [string, string, string];
      return { storageKey, namespace, name };
    });
  }

  /** Stores `object` (a fresh object the caller no longer touches) with the next resourceVersion. */
  put(storageKey: string, object: StoredObject): StoredObject {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name;
    let byNamespace = this.objects.get(storageKey);
    if (!byNamespace) this.objects.set(storageKey, (byNamespace = new Map()));
    let names = byNamespace.get(namespace);
    if (!names) byNamespace.set(namespace, (names = new Map()));
    const previous = names.get(name);
    this.rv += 1;
    object.metadata.resourceVersion = String(this.rv);
    names.set(name, object);
    this.indexOwners(storageKey, previous, object);
    this.record({ type: previous ? 'MODIFIED' : 'ADDED', storageKey, namespace, object, ...(previous ? { previous } : {}), rv: this.rv });
    return object;
  }

  /** Removes an object; answers its last state, carrying the deletion's resourceVersion. */
  remove(storageKey: string, namespace: string, name: string): StoredObject | undefined {
    const names = this.objects.get(storageKey)?.get(namespace);
    const existing = names?.get(name);
    if (!names || !existing) return undefined;
    names.delete(name);
    if (names.size === 0) this.objects.get(storageKey)!.delete(namespace);
    this.rv += 1;
    const last: StoredObject = { ...existing, metadata: { ...existing.metadata, resourceVersion: String(this.rv) } };
    this.indexOwners(storageKey, existing, undefined);
    this.record({ type: 'DELETED', storageKey, namespace, object: last, rv: this.rv });
    return last;
  }

  private indexOwners(storageKey: string, before: StoredObject | undefined, after: StoredObject | undefined): void {
    const object = (after ?? before)!;
    const key = dependentKey(storageKey, object.metadata.namespace ?? '', object.metadata.name);
    for (const ref of before?.metadata.ownerReferences ?? []) {
      const set = this.dependents.get(ref.uid);
      set?.delete(key);
      if (set?.size === 0) this.dependents.delete(ref.uid);
    }
    for (const ref of after?.metadata.ownerReferences ?? []) {
      let set = this.dependents.get(ref.uid);
      if (!set) this.dependents.set(ref.uid, (set = new Set()));
      set.add(key);
    }
  }

  private record(change: Change): void {
    let history = this.histories.get(change.storageKey);
    if (!history) this.histories.set(change.storageKey, (history = { changes: [], compactedRv: 0 }));
    history.changes.push(change);
    // Dropped in chunks, so that a full history costs O(1) per write on average.
    const chunk = Math.max(1, Math.floor(this.historyLimit / 4));
    if (history.changes.length >= this.historyLimit + chunk) {
      const dropped = history.changes.splice(0, history.changes.length - this.historyLimit);
      history.compactedRv = dropped[dropped.length - 1]!.rv;
    }
    const sinks = this.watchers.get(change.storageKey);
    if (sinks) for (const sink of sinks) deliver(sink, change);
    for (const listener of this.listeners) listener(change);
  }

  /** Calls `listener` synchronously after every change; it must only take note (enqueue), not write. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Opens a watch. Without `fromRv`, the current objects come first as ADDED events (what the
   * API server does for a watch without resourceVersion); with it, the changes after that version
   * are replayed. Throws a 410 Expired Status when they are no longer all in the history.
   */
  watch(storageKey: string, sink: WatchSink, fromRv: number | undefined): () => void {
    if (fromRv === undefined) {
      const objects = this.list(storageKey, sink.namespace).sort(byNamespaceAndName);
      for (const o of objects) if (sink.matches(o)) sink.send('ADDED', o);
    } else {
      const history = this.histories.get(storageKey);
      if (history && fromRv < history.compactedRv) {
        throw errors.expired(`too old resource version: ${fromRv} (${history.compactedRv + 1})`);
      }
      for (const change of changesAfter(history?.changes ?? [], fromRv)) deliver(sink, change);
    }
    let sinks = this.watchers.get(storageKey);
    if (!sinks) this.watchers.set(storageKey, (sinks = new Set()));
    sinks.add(sink);
    return () => {
      sinks.delete(sink);
    };
  }
}

export function byNamespaceAndName(a: StoredObject, b: StoredObject): number {
  const na = a.metadata.namespace ?? '';
  const nb = b.metadata.namespace ?? '';
  if (na !== nb) return na < nb ? -1 : 1;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

function changesAfter(changes: readonly Change[], rv: number): readonly Change[] {
  let low = 0;
  let high = changes.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (changes[mid]!.rv <= rv) low = mid + 1;
    else high = mid;
  }
  return changes.slice(low);
}

/**
 * What a filtered watch sees of a change: an object starting to match arrives as ADDED, one
 * ceasing to match leaves as DELETED, as the API server's watch cache reports them.
 */
function deliver(sink: WatchSink, change: Change): void {
  if (sink.namespace !== undefined && sink.namespace !== change.namespace) return;
  if (change.type === 'DELETED') {
    if (sink.matches(change.object)) sink.send('DELETED', change.object);
    return;
  }
  const now = sink.matches(change.object);
  const before = change.previous !== undefined && sink.matches(change.previous);
  if (change.type === 'ADDED') {
    if (now) sink.send('ADDED', change.object);
  } else if (now && before) sink.send('MODIFIED', change.object);
  else if (now) sink.send('ADDED', change.object);
  else if (before) sink.send('DELETED', change.object);
}
