/**
 * Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), which is what
 * `kubectl get` asks for: the usual columns for the kinds people look at (pods, deployments,
 * nodes, events...), a CRD's `additionalPrinterColumns` with simple JSONPaths, Name and Age for
 * the rest.
 */
import type { ResourceType } from './resources.js';
import type { StoredObject } from './types.js';

interface Column {
  name: string;
  type: 'string' | 'integer' | 'date';
  format?: string;
  description: string;
  priority: number;
}

/** Whether the client asked for a Table (kubectl does; client-node does not). */
export function wantsTable(accept: string | undefined): boolean {
  return /as=Table/.test(accept ?? '') && /g=meta\.k8s\.io/.test(accept ?? '');
}

/** `45s`, `5m3s`, `3h4m`, `6d`: kubectl's human durations. */
export function age(since: string | undefined, now = Date.now()): string {
  if (!since) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  if (d < 730) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

const col = (name: string, type: Column['type'] = 'string', priority = 0, format = ''): Column => ({ name, type, format, description: name, priority });
const NAME = col('Name', 'string', 0, 'name');
const AGE = col('Age');

type Printer = { columns: Column[]; cells(o: StoredObject): unknown[] };

function podStatusText(pod: StoredObject): string {
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  for (const c of (pod.status?.containerStatuses ?? []) as { state?: { waiting?: { reason?: string }; terminated?: { reason?: string } } }[]) {
    if (c.state?.waiting?.reason) return c.state.waiting.reason;
    if (c.state?.terminated?.reason) return c.state.terminated.reason;
  }
  return pod.status?.phase ?? 'Pending';
}

const PRINTERS: Record<string, Printer> = {
  pods: {
    columns: [NAME, col('Ready'), col('Status'), col('Restarts', 'integer'), AGE, col('IP', 'string', 1), col('Node', 'string', 1)],
    cells: (p) => {
      const statuses = (p.status?.containerStatuses ?? []) as { ready?: boolean; restartCount?: number }[];
      const total = (p.spec?.containers ?? []).length;
      return [
        p.metadata.name,
        `${statuses.filter((s) => s.ready).length}/${total}`,
        podStatusText(p),
        statuses.reduce((n, s) => n + (s.restartCount ?? 0), 0),
        age(p.metadata.creationTimestamp),
        p.status?.podIP ?? '<none>',
        p.spec?.nodeName ?? '<none>',
      ];
    },
  },
  'deployments.apps': {
    columns: [NAME, col('Ready'), col('Up-to-date', 'integer'), col('Available', 'integer'), AGE, col('Containers', 'string', 1), col('Images', 'string', 1)],
    cells: (d) => [
      d.metadata.name,
      `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 1}`,
      d.status?.updatedReplicas ?? 0,
      d.status?.availableReplicas ?? 0,
      age(d.metadata.creationTimestamp),
      (d.spec?.template?.spec?.containers ?? []).map((c: { name: string }) => c.name).join(','),
      (d.spec?.template?.spec?.containers ?? []).map((c: { image: string }) => c.image).join(','),
    ],
  },
  'replicasets.apps': {
    columns: [NAME, col('Desired', 'integer'), col('Current', 'integer'), col('Ready', 'integer'), AGE],
    cells: (r) => [r.metadata.name, r.spec?.replicas ?? 0, r.status?.replicas ?? 0, r.status?.readyReplicas ?? 0, age(r.metadata.creationTimestamp)],
  },
  nodes: {
    columns: [NAME, col('Status'), col('Roles'), AGE, col('Version'), col('Internal-IP', 'string', 1)],
    cells: (n) => [
      n.metadata.name,
      (n.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True') ? 'Ready' : 'NotReady',
      Object.keys(n.metadata.labels ?? {})
        .filter((l) => l.startsWith('node-role.kubernetes.io/'))
        .map((l) => l.slice('node-role.kubernetes.io/'.length))
        .join(',') || '<none>',
      age(n.metadata.creationTimestamp),
      n.status?.nodeInfo?.kubeletVersion ?? '',
      (n.status?.addresses ?? []).find((a: { type: string }) => a.type === 'InternalIP')?.address ?? '<none>',
    ],
  },
  namespaces: {
    columns: [NAME, col('Status'), AGE],
    cells: (n) => [n.metadata.name, n.status?.phase ?? 'Active', age(n.metadata.creationTimestamp)],
  },
  services: {
    columns: [NAME, col('Type'), col('Cluster-IP'), col('External-IP'), col('Port(s)'), AGE],
    cells: (s) => [
      s.metadata.name,
      s.spec?.type ?? 'ClusterIP',
      s.spec?.clusterIP ?? '<none>',
      '<none>',
      (s.spec?.ports ?? []).map((p: { port: number; protocol?: string }) => `${p.port}/${p.protocol ?? 'TCP'}`).join(',') || '<none>',
      age(s.metadata.creationTimestamp),
    ],
  },
  configmaps: {
    columns: [NAME, col('Data', 'integer'), AGE],
    cells: (c) => [c.metadata.name, Object.keys((c.data as object) ?? {}).length + Object.keys((c.binaryData as object) ?? {}).length, age(c.metadata.creationTimestamp)],
  },
  secrets: {
    columns: [NAME, col('Type'), col('Data', 'integer'), AGE],
    cells: (s) => [s.metadata.name, s.type ?? 'Opaque', Object.keys((s.data as object) ?? {}).length, age(s.metadata.creationTimestamp)],
  },
  events: {
    columns: [col('Last Seen'), col('Type'), col('Reason'), col('Object'), col('Message')],
    cells: (e) => {
      const involved = (e.involvedObject ?? {}) as { kind?: string; name?: string };
      return [age((e.lastTimestamp as string | undefined) ?? e.metadata.creationTimestamp), e.type ?? 'Normal', e.reason ?? '', `${String(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`, e.message ?? ''];
    },
  },
  'customresourcedefinitions.apiextensions.k8s.io': {
    columns: [NAME, col('Created At', 'date')],
    cells: (c) => [c.metadata.name, c.metadata.creationTimestamp],
  },
};

const DEFAULT_PRINTER: Printer = { columns: [NAME, AGE], cells: (o) => [o.metadata.name, age(o.metadata.creationTimestamp)] };

/** `.status.phase`-style JSONPaths of additionalPrinterColumns; anything fancier prints empty. */
function simplePath(object: unknown, path: string): unknown {
  if (!/^(\.[A-Za-z0-9_-]+)+$/.test(path)) return '';
  let current: unknown = object;
  for (const key of path.slice(1).split('.')) {
    if (current === null || typeof current !== 'object') return '';
    current = (current as Record<string, unknown>)[key];
  }
  return current ?? '';
}

function printerFor(type: ResourceType, crd: StoredObject | undefined): Printer {
  const builtin = PRINTERS[type.storageKey];
  if (builtin) return builtin;
  const version = (crd?.spec?.versions as { name: string; additionalPrinterColumns?: { name: string; type?: string; jsonPath: string; priority?: number }[] }[] | undefined)?.find(
    (v) => v.name === type.version,
  );
  const extra = version?.additionalPrinterColumns;
  if (!extra?.length) return DEFAULT_PRINTER;
  return {
    columns: [NAME, ...extra.map((c) => col(c.name, c.type === 'integer' ? 'integer' : 'string', c.priority ?? 0))],
    cells: (o) => [o.metadata.name, ...extra.map((c) => (c.type === 'date' ? age(String(simplePath(o, c.jsonPath)) || undefined) : simplePath(o, c.jsonPath)))],
  };
}

/** A `meta.k8s.io/v1` Table of `items`, each row carrying the object's metadata (or the object). */
export function toTable(type: ResourceType, items: StoredObject[], resourceVersion: string, crd: StoredObject | undefined, includeObject: string | null): unknown {
  const printer = printerFor(type, crd);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: printer.columns,
    rows: items.map((o) => ({
      cells: printer.cells(o),
      ...(includeObject === 'None'
        ? {}
        : { object: includeObject === 'Object' ? o : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata } }),
    })),
  };
}
