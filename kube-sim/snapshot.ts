/**
 * What kube-sim keeps across restarts of the local profile: the objects of the host and of every
 * virtual cluster, written to a file when it stops (and now and then while it runs) and put back
 * when it starts, so that the platform's CloudSpaces, virtual clusters and apps, which PostgreSQL
 * remembers, still exist in the "cluster" after `npm start` is run again.
 *
 * Objects keep their uid, creation time, generation and status, so owner references and the
 * Deployment → ReplicaSet revisions stay as they were. What the simulated controllers make again
 * from their owners, or what only describes a moment, is not kept: pods (the ReplicaSets create
 * them again, and they become Ready as new pods do), events, endpoints, nodes and leases.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { SimCluster } from './cluster.js';
import type { StoredObject } from './types.js';

export const SNAPSHOT_VERSION = 1;

/** Made again by the controllers, or only true of a moment: never kept. */
const NOT_KEPT = new Set([
  'pods',
  'events',
  'events.events.k8s.io',
  'endpoints',
  'endpointslices.discovery.k8s.io',
  'nodes',
  'leases.coordination.k8s.io',
]);

const CRDS = 'customresourcedefinitions.apiextensions.k8s.io';

export interface ClusterSnapshot {
  objects: { storageKey: string; object: StoredObject }[];
}

export interface KubeSimSnapshot {
  version: typeof SNAPSHOT_VERSION;
  host: ClusterSnapshot;
  virtualClusters: { namespace: string; name: string; token: string; state: ClusterSnapshot }[];
}

/** Restore order: definitions of kinds first, then namespaces, then everything else. */
const rank = (storageKey: string) => (storageKey === CRDS ? 0 : storageKey === 'namespaces' ? 1 : 2);

export function snapshotCluster(cluster: SimCluster): ClusterSnapshot {
  const storageKeys = [...new Set(cluster.registry.allTypes().map((t) => t.storageKey))].filter((k) => !NOT_KEPT.has(k));
  storageKeys.sort((a, b) => rank(a) - rank(b));
  const objects: ClusterSnapshot['objects'] = [];
  for (const storageKey of storageKeys) {
    for (const object of cluster.store.list(storageKey)) {
      if (!object.metadata.deletionTimestamp) objects.push({ storageKey, object });
    }
  }
  return { objects };
}

/**
 * Puts a snapshot's objects back into a started cluster. Objects that exist already (the
 * namespaces and definitions every cluster starts with) are left as they are; objects of a kind
 * the cluster does not serve (a definition missing from the snapshot) are skipped and counted.
 */
export function restoreCluster(cluster: SimCluster, snapshot: ClusterSnapshot): { restored: number; skipped: number } {
  let restored = 0;
  let skipped = 0;
  const ordered = [...snapshot.objects].sort((a, b) => rank(a.storageKey) - rank(b.storageKey));
  for (const { storageKey, object } of ordered) {
    if (NOT_KEPT.has(storageKey)) continue;
    const type = cluster.registry.storageType(storageKey);
    if (!type || cluster.find(type, object.metadata.namespace ?? '', object.metadata.name)) {
      skipped += 1;
      continue;
    }
    try {
      cluster.restore(type, structuredClone(object));
      restored += 1;
    } catch {
      skipped += 1; // its namespace is gone from the snapshot
    }
  }
  return { restored, skipped };
}

/** Whether `value` looks like a snapshot this version of kube-sim wrote. */
export function isKubeSimSnapshot(value: unknown): value is KubeSimSnapshot {
  const v = value as Partial<KubeSimSnapshot> | null;
  return typeof v === 'object' && v !== null && v.version === SNAPSHOT_VERSION && Array.isArray(v.host?.objects) && Array.isArray(v.virtualClusters);
}

/**
 * Reads a snapshot file. Answers undefined when there is none; a file that cannot be used (not
 * JSON, another version) is reported through `problem` and set aside, never half restored.
 */
export function readSnapshotFile(file: string, problem: (message: string) => void): KubeSimSnapshot | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (isKubeSimSnapshot(parsed)) return parsed;
    problem(`${file} is not a kube-sim snapshot of version ${SNAPSHOT_VERSION}; starting empty (the file is kept as ${file}.unused)`);
  } catch (error) {
    problem(`${file} cannot be read (${(error as Error).message}); starting empty (the file is kept as ${file}.unused)`);
  }
  renameSync(file, `${file}.unused`);
  return undefined;
}

/**
 * Keeps `file` current: writes a snapshot every `intervalMs` when something changed (so that a
 * crash loses little) and on `save()`, atomically (a temporary file renamed over it).
 */
export function keepSnapshotFile(
  sim: { snapshot(): KubeSimSnapshot; host: SimCluster; virtualClusters(): { cluster: SimCluster }[] },
  file: string,
  intervalMs = 10_000,
): { save(): void; stop(): void } {
  /** Moves with any write to the host or a virtual cluster, and when one comes or goes. */
  const version = () => [sim.host, ...sim.virtualClusters().map((v) => v.cluster)].map((c) => c.store.currentRv()).join(',');
  let saved = '';
  const save = () => {
    const current = version();
    writeFileSync(`${file}.tmp`, JSON.stringify(sim.snapshot()), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    saved = current;
  };
  const timer = setInterval(() => {
    if (version() !== saved) save();
  }, intervalMs);
  timer.unref();
  return { save, stop: () => clearInterval(timer) };
}
