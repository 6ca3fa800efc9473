/**
 * The kinds kube-sim serves, and discovery built from them: built-in kinds of the API server,
 * the custom resources the platform relies on (registered as real CustomResourceDefinition
 * objects at start), and whatever CRDs clients create later.
 */
import { METADATA_MERGE_KEYS, podSpecMergeKeys, type MergeKeys } from './patch.js';
import { isPlainObject, type KubeObject } from './types.js';

/** How object names of a kind are validated (k8s.io/apimachinery `pkg/api/validation`). */
export type NameRule = 'subdomain' | 'label' | 'dns1035';

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  /** `v1` or `apps/v1`. */
  apiVersion: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  /** Has the `status` subresource: main writes keep the stored status, `/status` writes change only it. */
  status: boolean;
  /** Has the `scale` subresource (autoscaling/v1 Scale over `spec.replicas`). */
  scale: boolean;
  shortNames: string[];
  categories: string[];
  /** Served by the API server itself; false for kinds defined by a CustomResourceDefinition. */
  builtin: boolean;
  verbs: string[];
  /** Where objects live, shared by every version of a resource: `deployments.apps`, `pods`. */
  storageKey: string;
  names: NameRule;
  /** Strategic merge patch keys; null where strategic merge patch is refused (custom resources). */
  mergeKeys: MergeKeys | null;
  /** Computed on request, never stored (metrics.k8s.io). */
  virtual: boolean;
}

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface TypeSpec {
  group?: string;
  version: string;
  kind: string;
  plural: string;
  namespaced?: boolean;
  status?: boolean;
  scale?: boolean;
  shortNames?: string[];
  categories?: string[];
  names?: NameRule;
  mergeKeys?: [string, string][];
  virtual?: boolean;
  builtin?: boolean;
  verbs?: string[];
}

export function resourceType(spec: TypeSpec): ResourceType {
  const group = spec.group ?? '';
  const builtin = spec.builtin ?? true;
  return {
    group,
    version: spec.version,
    apiVersion: group ? `${group}/${spec.version}` : spec.version,
    kind: spec.kind,
    listKind: `${spec.kind}List`,
    plural: spec.plural,
    singular: spec.kind.toLowerCase(),
    namespaced: spec.namespaced ?? true,
    status: spec.status ?? false,
    scale: spec.scale ?? false,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    builtin,
    verbs: spec.verbs ?? ALL_VERBS,
    storageKey: group ? `${spec.plural}.${group}` : spec.plural,
    names: spec.names ?? 'subdomain',
    mergeKeys: builtin ? new Map([...METADATA_MERGE_KEYS, ...(spec.mergeKeys ?? [])]) : null,
    virtual: spec.virtual ?? false,
  };
}

const WORKLOAD = ['all'];

/** The built-in kinds: what a `kind` cluster serves that the platform (or a human) may touch. */
export function builtinTypes(): ResourceType[] {
  return [
    resourceType({ version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false, status: true, shortNames: ['ns'], names: 'label' }),
    resourceType({ version: 'v1', kind: 'Pod', plural: 'pods', status: true, shortNames: ['po'], categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec') }),
    resourceType({
      version: 'v1',
      kind: 'Service',
      plural: 'services',
      status: true,
      shortNames: ['svc'],
      categories: WORKLOAD,
      names: 'dns1035',
      mergeKeys: [['spec.ports', 'port']],
    }),
    resourceType({ version: 'v1', kind: 'ConfigMap', plural: 'configmaps', shortNames: ['cm'] }),
    resourceType({ version: 'v1', kind: 'Secret', plural: 'secrets' }),
    resourceType({ version: 'v1', kind: 'Event', plural: 'events', shortNames: ['ev'] }),
    resourceType({ version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', shortNames: ['sa'], mergeKeys: [['secrets', 'name']] }),
    resourceType({ version: 'v1', kind: 'ResourceQuota', plural: 'resourcequotas', status: true, shortNames: ['quota'] }),
    resourceType({ version: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims', status: true, shortNames: ['pvc'] }),
    resourceType({ version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false, status: true, shortNames: ['no'] }),
    resourceType({ group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', status: true, scale: true, shortNames: ['deploy'], categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec.template.spec') }),
    resourceType({ group: 'apps', version: 'v1', kind: 'ReplicaSet', plural: 'replicasets', status: true, scale: true, shortNames: ['rs'], categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec.template.spec') }),
    resourceType({ group: 'apps', version: 'v1', kind: 'StatefulSet', plural: 'statefulsets', status: true, scale: true, shortNames: ['sts'], categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec.template.spec') }),
    resourceType({ group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', status: true, shortNames: ['ds'], categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec.template.spec') }),
    resourceType({ group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', plural: 'ingresses', status: true, shortNames: ['ing'] }),
    resourceType({ group: 'networking.k8s.io', version: 'v1', kind: 'NetworkPolicy', plural: 'networkpolicies', shortNames: ['netpol'] }),
    resourceType({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', status: true, categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec.template.spec') }),
    resourceType({ group: 'batch', version: 'v1', kind: 'CronJob', plural: 'cronjobs', status: true, shortNames: ['cj'], categories: WORKLOAD, mergeKeys: podSpecMergeKeys('spec.jobTemplate.spec.template.spec') }),
    resourceType({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers', status: true, shortNames: ['hpa'], categories: WORKLOAD }),
    resourceType({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role', plural: 'roles' }),
    resourceType({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'RoleBinding', plural: 'rolebindings' }),
    resourceType({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', plural: 'clusterroles', namespaced: false }),
    resourceType({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false }),
    resourceType({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition', plural: 'customresourcedefinitions', namespaced: false, status: true, shortNames: ['crd', 'crds'] }),
    resourceType({ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'PodMetrics', plural: 'pods', virtual: true, verbs: ['get', 'list'] }),
    resourceType({ group: 'metrics.k8s.io', version: 'v1beta1', kind: 'NodeMetrics', plural: 'nodes', namespaced: false, virtual: true, verbs: ['get', 'list'] }),
  ];
}

interface CrdSpec {
  group: string;
  kind: string;
  plural: string;
  versions: string[];
  namespaced?: boolean;
  shortNames?: string[];
  categories?: string[];
  /** What `kubectl get` shows besides the name. */
  printerColumns?: { name: string; type: 'string' | 'boolean' | 'integer' | 'date'; jsonPath: string }[];
}

const AGE_COLUMN = { name: 'Age', type: 'date' as const, jsonPath: '.metadata.creationTimestamp' };

/** A CustomResourceDefinition accepting any fields, with the status subresource on every version. */
export function customResourceDefinition(spec: CrdSpec): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${spec.plural}.${spec.group}`, labels: { 'app.kubernetes.io/managed-by': 'kube-sim' } },
    spec: {
      group: spec.group,
      scope: spec.namespaced === false ? 'Cluster' : 'Namespaced',
      names: {
        kind: spec.kind,
        listKind: `${spec.kind}List`,
        plural: spec.plural,
        singular: spec.kind.toLowerCase(),
        ...(spec.shortNames ? { shortNames: spec.shortNames } : {}),
        ...(spec.categories ? { categories: spec.categories } : {}),
      },
      versions: spec.versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        subresources: { status: {} },
        additionalPrinterColumns: [...(spec.printerColumns ?? []), AGE_COLUMN],
      })),
    },
  };
}

/** The custom resources of the platform: Cluster API with its vcluster and docker providers, Flux, PlatformApp. */
export function platformCrds(): KubeObject[] {
  return [
    customResourceDefinition({
      group: 'cluster.x-k8s.io',
      kind: 'Cluster',
      plural: 'clusters',
      versions: ['v1beta1'],
      shortNames: ['cl'],
      categories: ['cluster-api'],
      printerColumns: [{ name: 'Phase', type: 'string', jsonPath: '.status.phase' }],
    }),
    customResourceDefinition({
      group: 'infrastructure.cluster.x-k8s.io',
      kind: 'VCluster',
      plural: 'vclusters',
      versions: ['v1alpha1'],
      categories: ['cluster-api'],
      printerColumns: [{ name: 'Ready', type: 'boolean', jsonPath: '.status.ready' }],
    }),
    customResourceDefinition({
      group: 'infrastructure.cluster.x-k8s.io',
      kind: 'DockerCluster',
      plural: 'dockerclusters',
      versions: ['v1beta1'],
      categories: ['cluster-api'],
      printerColumns: [{ name: 'Ready', type: 'boolean', jsonPath: '.status.ready' }],
    }),
    customResourceDefinition({
      group: 'kustomize.toolkit.fluxcd.io',
      kind: 'Kustomization',
      plural: 'kustomizations',
      versions: ['v1'],
      shortNames: ['ks'],
      categories: ['flux'],
      printerColumns: [{ name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' }],
    }),
    customResourceDefinition({ group: 'source.toolkit.fluxcd.io', kind: 'GitRepository', plural: 'gitrepositories', versions: ['v1'], shortNames: ['gitrepo'], categories: ['flux'] }),
    customResourceDefinition({ group: 'platform.cloudops.dev', kind: 'PlatformApp', plural: 'platformapps', versions: ['v1alpha1'], shortNames: ['papp'] }),
  ];
}

/** The served versions of a (validated) CRD as resource types. */
export function typesFromCrd(crd: KubeObject): ResourceType[] {
  const spec = crd.spec as {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular?: string; listKind?: string; shortNames?: string[]; categories?: string[] };
    versions: { name: string; served?: boolean; subresources?: { status?: unknown; scale?: unknown } }[];
  };
  return spec.versions
    .filter((v) => v.served !== false)
    .map((v) => ({
      ...resourceType({
        group: spec.group,
        version: v.name,
        kind: spec.names.kind,
        plural: spec.names.plural,
        namespaced: spec.scope !== 'Cluster',
        status: isPlainObject(v.subresources) && v.subresources.status !== undefined,
        scale: false,
        shortNames: spec.names.shortNames ?? [],
        categories: spec.names.categories ?? [],
        builtin: false,
      }),
      singular: spec.names.singular || spec.names.kind.toLowerCase(),
      listKind: spec.names.listKind || `${spec.names.kind}List`,
    }));
}

/**
 * Kubernetes version priority (`v1` > `v1beta2` > `v1beta1` > `v1alpha1` > anything else),
 * used to pick a group's preferred version.
 */
function versionPriority(version: string): number[] {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
  if (!m) return [0, 0, 0];
  const stage = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
  return [stage, Number(m[1]), Number(m[3] ?? 0)];
}

function compareVersions(a: string, b: string): number {
  const pa = versionPriority(a);
  const pb = versionPriority(b);
  for (let i = 0; i < 3; i += 1) if (pa[i] !== pb[i]) return pb[i]! - pa[i]!;
  return a.localeCompare(b);
}

export class ResourceRegistry {
  private readonly byPath = new Map<string, ResourceType>();
  private readonly byKind = new Map<string, ResourceType>();
  /** storage key → the first registered version, which the controllers and the store use. */
  private readonly byStorage = new Map<string, ResourceType>();
  /** Group → versions in registration order; the core group is ''. */
  private readonly groups = new Map<string, Set<string>>();

  register(types: readonly ResourceType[]): void {
    for (const t of types) {
      this.byPath.set(`${t.group}/${t.version}/${t.plural}`, t);
      this.byKind.set(`${t.apiVersion}|${t.kind}`, t);
      if (!t.virtual && !this.byStorage.has(t.storageKey)) this.byStorage.set(t.storageKey, t);
      let versions = this.groups.get(t.group);
      if (!versions) this.groups.set(t.group, (versions = new Set()));
      versions.add(t.version);
    }
  }

  /** Removes every version of a resource; answers what was removed. */
  unregister(storageKey: string): ResourceType[] {
    const removed = [...this.byPath.values()].filter((t) => t.storageKey === storageKey);
    this.byStorage.delete(storageKey);
    for (const t of removed) {
      this.byPath.delete(`${t.group}/${t.version}/${t.plural}`);
      this.byKind.delete(`${t.apiVersion}|${t.kind}`);
    }
    for (const t of removed) {
      const stillServed = [...this.byPath.values()].some((o) => o.group === t.group && o.version === t.version);
      if (!stillServed) this.groups.get(t.group)?.delete(t.version);
      if (this.groups.get(t.group)?.size === 0) this.groups.delete(t.group);
    }
    return removed;
  }

  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  lookupKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.byKind.get(`${apiVersion}|${kind}`);
  }

  /** The stored (non-virtual) types, one per storage key. */
  storedTypes(): ResourceType[] {
    return [...this.byStorage.values()];
  }

  /** The type stored under `storageKey` (`pods`, `deployments.apps`), if served. */
  storageType(storageKey: string): ResourceType | undefined {
    return this.byStorage.get(storageKey);
  }

  /** Every served type, all versions. */
  allTypes(): ResourceType[] {
    return [...this.byPath.values()];
  }

  groupVersions(): { group: string; version: string }[] {
    return [...this.groups.entries()].flatMap(([group, versions]) => [...versions].map((version) => ({ group, version })));
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.groups.get(group)?.has(version) ?? false;
  }

  private sortedVersions(group: string): string[] {
    return [...(this.groups.get(group) ?? [])].sort(compareVersions);
  }

  /** `GET /api` */
  apiVersions(serverAddress: string): unknown {
    return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
  }

  private apiGroup(group: string): unknown {
    const versions = this.sortedVersions(group).map((version) => ({ groupVersion: `${group}/${version}`, version }));
    return { name: group, versions, preferredVersion: versions[0] };
  }

  /** `GET /apis` */
  apiGroupList(): unknown {
    const groups = [...this.groups.keys()].filter((g) => g !== '').map((g) => this.apiGroup(g));
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }

  /** `GET /apis/{group}`, or undefined when the group is not served. */
  apiGroupDocument(group: string): unknown {
    if (!this.groups.has(group) || group === '') return undefined;
    return { kind: 'APIGroup', apiVersion: 'v1', ...(this.apiGroup(group) as object) };
  }

  /** `GET /api/v1`, `GET /apis/{group}/{version}`: the APIResourceList with subresources. */
  resourceList(group: string, version: string): unknown {
    const resources: unknown[] = [];
    for (const t of this.byPath.values()) {
      if (t.group !== group || t.version !== version) continue;
      resources.push({
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: t.verbs,
        ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
        ...(t.categories.length ? { categories: t.categories } : {}),
      });
      if (t.status) resources.push({ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
      if (t.scale) resources.push({ name: `${t.plural}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] });
      if (t.storageKey === 'pods') resources.push({ name: 'pods/log', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get'] });
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
  }
}
