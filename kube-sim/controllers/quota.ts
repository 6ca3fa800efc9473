/**
 * ResourceQuota: admission refuses an object that would take a namespace over a quota's `hard`
 * limits with 403 Forbidden ("exceeded quota: ..."), as the API server's quota admission does,
 * and the quota controller keeps `status.used` current.
 *
 * Tracked: `pods`, `requests.cpu` (or `cpu`), `requests.memory` (or `memory`), `limits.cpu`,
 * `limits.memory`, `requests.storage`, the object counts `services`, `configmaps`, `secrets`,
 * `persistentvolumeclaims`, `resourcequotas`, and `count/<resource>[.<group>]`.
 */
import type { SimCluster } from '../cluster.js';
import { formatQuantity, parseQuantity } from '../quantity.js';
import type { ResourceType } from '../resources.js';
import { errors } from '../status.js';
import { isPlainObject, type KubeObject, type StoredObject } from '../types.js';
import { WorkQueue } from '../timers.js';
import { isPodActive } from './ownership.js';
import type { Controller } from './index.js';

const OBJECT_COUNTS: Record<string, string> = {
  services: 'services',
  configmaps: 'configmaps',
  secrets: 'secrets',
  persistentvolumeclaims: 'persistentvolumeclaims',
  resourcequotas: 'resourcequotas',
};

/** `cpu` and `memory` in a quota mean their requests. */
const canonicalResource = (resource: string): string => (resource === 'cpu' || resource === 'memory' ? `requests.${resource}` : resource);

type ContainerSpec = { name?: string; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } };

/** What one pod counts for: its containers' requests (defaulting to limits) and limits. */
function podUsage(pod: KubeObject): Map<string, number> {
  const usage = new Map<string, number>([
    ['pods', 1],
    ['count/pods', 1],
  ]);
  const containers: ContainerSpec[] = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  for (const c of containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    for (const r of ['cpu', 'memory']) {
      const request = requests[r] ?? limits[r];
      if (request !== undefined) usage.set(`requests.${r}`, (usage.get(`requests.${r}`) ?? 0) + parseQuantity(request));
      if (limits[r] !== undefined) usage.set(`limits.${r}`, (usage.get(`limits.${r}`) ?? 0) + parseQuantity(limits[r]));
    }
  }
  return usage;
}

/** Resources a pod must declare because a quota tracks them (`must specify ...`). */
function missingDeclarations(pod: KubeObject, tracked: string[]): string[] {
  const containers: ContainerSpec[] = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  const missing: string[] = [];
  for (const resource of tracked) {
    const [kind, r] = resource.split('.') as [string, string];
    if ((kind !== 'requests' && kind !== 'limits') || (r !== 'cpu' && r !== 'memory')) continue;
    const lacking = containers.some((c) => (kind === 'requests' ? (c.resources?.requests?.[r] ?? c.resources?.limits?.[r]) : c.resources?.limits?.[r]) === undefined);
    if (lacking) missing.push(resource);
  }
  return missing;
}

function countKey(type: ResourceType): string {
  return type.group ? `count/${type.plural}.${type.group}` : `count/${type.plural}`;
}

export function startQuotaController(cluster: SimCluster): Controller {
  const quotas = cluster.type('resourcequotas');

  /** Current usage in `namespace` of each resource in `resources`. */
  function usage(namespace: string, resources: string[]): Map<string, number> {
    const out = new Map<string, number>();
    const computeNeeded = resources.some((r) => r === 'pods' || r === 'count/pods' || r.startsWith('requests.') || r.startsWith('limits.'));
    if (computeNeeded) {
      for (const pod of cluster.store.list('pods', namespace)) {
        if (!isPodActive(pod)) continue;
        for (const [r, v] of podUsage(pod)) out.set(r, (out.get(r) ?? 0) + v);
      }
    }
    for (const r of resources) {
      if (OBJECT_COUNTS[r]) out.set(r, cluster.store.count(OBJECT_COUNTS[r], namespace));
      else if (r.startsWith('count/') && r !== 'count/pods') {
        const [plural, ...group] = r.slice('count/'.length).split('.');
        const storageKey = group.length ? `${plural}.${group.join('.')}` : plural!;
        out.set(r, cluster.store.count(storageKey, namespace));
      } else if (r === 'requests.storage') {
        let total = 0;
        for (const pvc of cluster.store.list('persistentvolumeclaims', namespace)) total += parseQuantity(pvc.spec?.resources?.requests?.storage ?? '0');
        out.set(r, total);
      }
      if (!out.has(r)) out.set(r, 0);
    }
    return out;
  }

  /** What creating `object` adds to each tracked resource; absent resources are not affected. */
  function requested(type: ResourceType, object: KubeObject): Map<string, number> {
    if (type.storageKey === 'pods') return podUsage(object);
    const out = new Map<string, number>([[countKey(type), 1]]);
    const plain = OBJECT_COUNTS[type.storageKey];
    if (plain) out.set(plain, 1);
    if (type.storageKey === 'persistentvolumeclaims') out.set('requests.storage', parseQuantity(object.spec?.resources?.requests?.storage ?? '0'));
    return out;
  }

  cluster.admit((operation, type, object) => {
    if (operation !== 'create' || !type.namespaced || type.storageKey === 'events') return;
    const namespace = object.metadata.namespace!;
    const inNamespace = cluster.store.list('resourcequotas', namespace);
    if (inNamespace.length === 0) return;
    const adds = requested(type, object);
    for (const quota of inNamespace.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
      const hard: Record<string, string> = isPlainObject(quota.spec?.hard) ? quota.spec.hard : {};
      const tracked = Object.keys(hard).map(canonicalResource);
      if (type.storageKey === 'pods') {
        const missing = missingDeclarations(object, tracked);
        if (missing.length) throw errors.forbidden(type, object.metadata.name!, `failed quota: ${quota.metadata.name}: must specify ${missing.sort().join(',')}`);
      }
      const relevant = Object.keys(hard).filter((r) => adds.has(canonicalResource(r)));
      if (relevant.length === 0) continue;
      const used = usage(namespace, relevant.map(canonicalResource));
      const exceeded = relevant.filter((r) => {
        const c = canonicalResource(r);
        return used.get(c)! + adds.get(c)! > parseQuantity(hard[r]!) + 1e-9;
      });
      if (exceeded.length) {
        const list = (values: (r: string) => string) =>
          exceeded
            .sort()
            .map((r) => `${r}=${values(r)}`)
            .join(',');
        throw errors.forbidden(
          type,
          object.metadata.name!,
          `exceeded quota: ${quota.metadata.name}, requested: ${list((r) => formatQuantity(r, adds.get(canonicalResource(r))!))}, used: ${list((r) => formatQuantity(r, used.get(canonicalResource(r))!))}, limited: ${list((r) => String(hard[r]))}`,
        );
      }
    }
  });

  const queue = new WorkQueue('resourcequota', cluster.timers, cluster.logger, (namespace) => {
    for (const quota of cluster.store.list('resourcequotas', namespace)) writeStatus(quota);
  });

  function writeStatus(quota: StoredObject): void {
    const hard: Record<string, string> = isPlainObject(quota.spec?.hard) ? quota.spec.hard : {};
    const used = usage(quota.metadata.namespace!, Object.keys(hard).map(canonicalResource));
    const formatted: Record<string, string> = {};
    for (const r of Object.keys(hard)) formatted[r] = formatQuantity(r, used.get(canonicalResource(r)) ?? 0);
    cluster.mutate(
      quotas,
      quota.metadata.namespace!,
      quota.metadata.name,
      (draft) => {
        draft.status = { hard: { ...hard }, used: formatted };
      },
      { status: true },
    );
  }

  const unsubscribe = cluster.store.subscribe((change) => {
    if (change.namespace === '' || change.storageKey === 'events') return;
    if (change.storageKey === 'resourcequotas') {
      if (change.type !== 'DELETED') queue.add(change.namespace);
      return;
    }
    // Pods change their phase often; only a namespace with quotas needs a recount.
    if (cluster.store.count('resourcequotas', change.namespace) > 0) queue.add(change.namespace);
  });

  return { stop: unsubscribe };
}
