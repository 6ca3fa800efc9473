/**
 * The local applier: a stand-in for Flux in the local profile and in tests. It follows the fleet
 * repository and, for every virtual-cluster folder
 *
 * ```
 * tenants/<tenantId>/<namespace>/<vcluster>/            ← one Flux Kustomization ("fleet") per folder
 *   <app>/*.yaml                                        ← every YAML document under it is applied
 * ```
 *
 * applies every YAML document found under the folder (recursively: every app folder) to the
 * virtual cluster `<vcluster>` of the host namespace `<namespace>` (client from the host Secret
 * `<vcluster>-kubeconfig`, key `value`), by server-side apply with the field manager
 * `flux-local`, and labels what it applies as Flux does (`kustomize.toolkit.fluxcd.io/name:
 * fleet`, `kustomize.toolkit.fluxcd.io/namespace: flux-system`). Objects it applied earlier that
 * are gone from the folder are pruned (a removed app disappears). It then records the outcome,
 * inside that virtual cluster, in a Flux `Kustomization` `flux-system/fleet`
 * (`kustomize.toolkit.fluxcd.io/v1`) through the status subresource: `lastAppliedRevision`
 * `<branch>@sha1:<sha>`, `lastAttemptedRevision`, a `Ready` condition and the inventory of
 * applied objects (used for pruning, so pruning survives restarts).
 *
 * A virtual cluster that cannot be reached (or whose kubeconfig Secret does not exist yet) is
 * retried on the next pass; one failing folder never stops the others. Production uses Flux.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import {
  ApiException,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1APIResource,
} from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { Logger } from '../../../kernel/logger.js';
import { clientsFor, isNotFound, kubeStatus, VirtualClusterClients, type KubeClients } from '../orchestrator/kube.js';
import { parseVclusterPath, TENANTS_ROOT } from './fleet-repo.js';
import { commitFromRevision, git, listTree, readBlobs, type TreeEntry } from './git.js';
import { virtualClustersFromHost } from './virtual-clusters.js';

/** The Flux Kustomization the applier writes in every virtual cluster it manages. */
export const KUSTOMIZATION = {
  group: 'kustomize.toolkit.fluxcd.io',
  version: 'v1',
  plural: 'kustomizations',
  namespace: 'flux-system',
  name: 'fleet',
} as const;

/** Labels put on every applied object (Flux's own). */
export const FLUX_NAME_LABEL = 'kustomize.toolkit.fluxcd.io/name';
export const FLUX_NAMESPACE_LABEL = 'kustomize.toolkit.fluxcd.io/namespace';
/** Flux's opt-out annotation: an object carrying `disabled` is never pruned. */
export const FLUX_PRUNE_ANNOTATION = 'kustomize.toolkit.fluxcd.io/prune';
/** The field manager of the applier's server-side applies. */
export const FIELD_MANAGER = 'flux-local';

export interface LocalApplierOptions {
  /** The fleet repository (any git URL; `file://` bare repository locally). */
  repoUrl: string;
  branch: string;
  /** A directory for the applier's own (bare) copy of the repository. */
  workdir: string;
  /** The cluster holding the CloudSpace namespaces and the virtual clusters' kubeconfig Secrets. */
  hostKubeConfig: KubeConfig;
  /** Time between passes; 0 disables polling (only {@link LocalApplier.sync} runs passes). @default 5000 */
  intervalMs?: number;
  logger: Logger;
  /** Unchanged folders are applied again (drift correction) this often. @default 60000 */
  resyncMs?: number;
  /** Virtual clusters applied at the same time. @default 4 */
  concurrency?: number;
}

/** What one pass did for one virtual cluster. */
export interface ApplierClusterResult {
  namespace: string;
  vcluster: string;
  /** The folder (`tenants/<t>/<ns>/<vc>`), or the last known one for a folder that disappeared. */
  folder: string;
  /** `applied`: objects applied (and pruned); `status`: only the revision moved; `unchanged`; `failed`. */
  outcome: 'applied' | 'status' | 'unchanged' | 'failed';
  applied: number;
  pruned: number;
  error?: string;
}

/** The outcome of one pass. */
export interface ApplierPass {
  /** The commit applied ('' when the branch does not exist yet). */
  sha: string;
  /** `<branch>@sha1:<sha>` */
  revision: string;
  startedAt: string;
  finishedAt: string;
  clusters: ApplierClusterResult[];
}

export interface LocalApplier {
  /**
   * Runs one pass now (after the one in progress, if any) and answers the commit it applied —
   * the branch head at the time of the pass ('' when the branch does not exist). Per-cluster
   * failures do not reject: see {@link lastPass}; a failure to fetch the repository does.
   */
  sync(): Promise<string>;
  /** The outcome of the last completed pass. */
  readonly lastPass: ApplierPass | undefined;
  /** Stops polling and waits for a pass in progress. */
  stop(): Promise<void>;
}

/** What `appliedRevision` reads back from a virtual cluster. */
export interface AppliedRevision {
  /** The commit of `lastAppliedRevision`. */
  sha: string;
  /** `lastAppliedRevision` as written (`main@sha1:<sha>`). */
  revision: string;
  /** The Ready condition. */
  ready: boolean;
  /** The Ready condition's message (the error when the last attempt failed). */
  message?: string;
  /** `lastAttemptedRevision`, when the last attempt was a different revision (it failed). */
  lastAttemptedRevision?: string;
  /** `spec.path` of the Kustomization. */
  path?: string;
}

interface KustomizationObject {
  metadata?: { generation?: number; resourceVersion?: string };
  spec?: { path?: string };
  status?: {
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
    inventory?: { entries?: { id: string; v: string }[] };
  };
}

/**
 * Reads the Flux Kustomization `flux-system/fleet` of a virtual cluster (Flux's or the local
 * applier's) and answers its last applied revision, parsed; undefined when there is none yet.
 * Works with Flux's `<branch>@sha1:<sha>` and the older `<branch>/<sha>` formats.
 */
export async function appliedRevision(kubeClients: KubeClients): Promise<AppliedRevision | undefined> {
  let object: KustomizationObject;
  try {
    object = (await kubeClients.custom.getNamespacedCustomObject({ ...KUSTOMIZATION })) as KustomizationObject;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  const revision = object.status?.lastAppliedRevision;
  const sha = revision ? commitFromRevision(revision) : undefined;
  if (!revision || !sha) return undefined;
  const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
  const attempted = object.status?.lastAttemptedRevision;
  return {
    sha,
    revision,
    ready: ready?.status === 'True',
    message: ready?.message,
    lastAttemptedRevision: attempted && attempted !== revision ? attempted : undefined,
    path: object.spec?.path,
  };
}

// ---------------------------------------------------------------------------------------------
// Objects
// ---------------------------------------------------------------------------------------------

/** KubernetesObjectApi with its (cached) discovery made public: is a kind namespaced? */
class ScopedObjectApi extends KubernetesObjectApi {
  static make(kc: KubeConfig): ScopedObjectApi {
    const api = kc.makeApiClient(ScopedObjectApi);
    api.setDefaultNamespace(kc);
    return api;
  }

  discover(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

interface Manifest {
  object: KubernetesObject & Record<string, unknown>;
  source: string;
}

/** Apply order, as kustomize and Flux sort: namespaces and definitions first, webhooks last. */
const KIND_ORDER = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'PodSecurityPolicy',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
const LAST_KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
function kindRank(kind: string): number {
  const index = KIND_ORDER.indexOf(kind);
  if (index >= 0) return index;
  const last = LAST_KINDS.indexOf(kind);
  return last >= 0 ? 1000 + last : 500;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Flux's inventory id: `<namespace>_<name>_<group>_<kind>`. */
function inventoryId(object: KubernetesObject): { id: string; v: string } {
  const { group, version } = splitApiVersion(object.apiVersion ?? '');
  return { id: `${object.metadata?.namespace ?? ''}_${object.metadata?.name ?? ''}_${group}_${object.kind ?? ''}`, v: version };
}

function fromInventory(entry: { id: string; v: string }): KubernetesObject | undefined {
  const parts = entry.id.split('_');
  if (parts.length !== 4 || !parts[1] || !parts[3]) return undefined;
  const [namespace, name, group, kind] = parts as [string, string, string, string];
  return { apiVersion: group ? `${group}/${entry.v}` : entry.v, kind, metadata: { name, ...(namespace ? { namespace } : {}) } };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every Kubernetes object in the YAML files (multi-document, `List` kinds expanded). */
function parseManifests(files: { path: string; text: string }[]): Manifest[] {
  const out: Manifest[] = [];
  for (const file of files) {
    const documents = parseAllDocuments(file.text);
    const list = Array.isArray(documents) ? documents : [documents];
    list.forEach((document, index) => {
      const source = `${file.path}#${index + 1}`;
      if (document.errors.length > 0) throw new Error(`${source}: invalid YAML: ${document.errors[0]!.message.split('\n')[0]}`);
      const value: unknown = document.toJS();
      if (value === null || value === undefined) return;
      if (!isObject(value)) throw new Error(`${source}: a manifest must be a mapping`);
      const items = typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items) ? (value.items as unknown[]) : [value];
      for (const item of items) {
        if (!isObject(item)) throw new Error(`${source}: a manifest must be a mapping`);
        const metadata = item.metadata;
        if (typeof item.apiVersion !== 'string' || typeof item.kind !== 'string' || !isObject(metadata) || typeof metadata.name !== 'string' || !metadata.name) {
          throw new Error(`${source}: a manifest needs apiVersion, kind and metadata.name`);
        }
        if (item.apiVersion.startsWith('kustomize.config.k8s.io/')) continue;
        out.push({ object: structuredClone(item) as Manifest['object'], source });
      }
    });
  }
  return out;
}

/** The message of a failed Kubernetes call, as the API server put it. */
export function describeKubeError(error: unknown): string {
  if (error instanceof ApiException) {
    let message: string | undefined;
    const body: unknown = error.body;
    try {
      const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string };
      message = parsed?.message;
    } catch {
      message = typeof body === 'string' ? body.slice(0, 200) : undefined;
    }
    return `HTTP ${error.code}${message ? `: ${message}` : ''}`;
  }
  const err = error as Error & { cause?: { code?: string; message?: string } };
  const cause = err?.cause?.code ?? err?.cause?.message;
  return `${err?.message ?? String(error)}${cause ? ` (${cause})` : ''}`.slice(0, 500);
}

// ---------------------------------------------------------------------------------------------
// The applier
// ---------------------------------------------------------------------------------------------

interface Target {
  namespace: string;
  vcluster: string;
  folder: string;
  tenants: Set<string>;
  entries: TreeEntry[];
  hash: string;
  /** A virtual cluster found on the host with no folder: only acted on when it has a Kustomization of ours. */
  discovered?: boolean;
}

interface ClusterState {
  folder: string;
  hash: string;
  sha: string;
  ok: boolean;
  appliedAt: number;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

function hashEntries(entries: TreeEntry[]): string {
  const hash = createHash('sha256');
  for (const entry of [...entries].sort((a, b) => a.path.localeCompare(b.path))) hash.update(`${entry.path}\0${entry.object}\n`);
  return hash.digest('hex');
}

const EMPTY_HASH = hashEntries([]);

/** Starts the local applier: a first pass at once, then one every `intervalMs`. */
export async function startLocalApplier(options: LocalApplierOptions): Promise<LocalApplier> {
  const { repoUrl, branch, hostKubeConfig } = options;
  const intervalMs = options.intervalMs ?? 5000;
  const resyncMs = options.resyncMs ?? 60_000;
  const concurrency = Math.max(1, options.concurrency ?? 4);
  const log = options.logger.child({ component: 'local-applier', branch });
  const workdir = resolve(options.workdir);
  const trackingRef = `refs/remotes/origin/${branch}`;

  // The applier's own bare copy (only objects and one ref; nothing is checked out).
  await mkdir(workdir, { recursive: true });
  if (!(existsSync(join(workdir, 'HEAD')) && existsSync(join(workdir, 'objects')))) {
    if ((await readdir(workdir)).length > 0) throw new Error(`local applier workdir ${workdir} is not empty and not a bare git repository`);
    await git(workdir, ['init', '--bare', '--quiet', workdir]);
  }

  const hostClients = clientsFor(hostKubeConfig);
  const virtualClients = new VirtualClusterClients(async () => hostClients, 30_000);
  const listVirtualClusters = virtualClustersFromHost(hostKubeConfig);
  const objectApis = new WeakMap<KubeClients, ScopedObjectApi>();
  const objectsOf = (clients: KubeClients) => {
    let api = objectApis.get(clients);
    if (!api) {
      api = ScopedObjectApi.make(clients.kubeConfig);
      objectApis.set(clients, api);
    }
    return api;
  };
  const state = new Map<string, ClusterState>();
  let lastDiscovery = 0;
  let lastPass: ApplierPass | undefined;

  async function fetchHead(): Promise<string | undefined> {
    const result = await git(workdir, ['fetch', '--quiet', '--no-tags', repoUrl, `+refs/heads/${branch}:${trackingRef}`], { allow: [0, 128] });
    if (result.code !== 0) {
      if (/couldn't find remote ref|could not find remote ref/i.test(result.stderr)) return undefined;
      throw new Error(`local applier: cannot fetch ${branch}: ${result.stderr.trim().split('\n').pop()}`);
    }
    return (await git(workdir, ['rev-parse', '--verify', `${trackingRef}^{commit}`])).stdout.trim();
  }

  /** The virtual-cluster folders of the commit, keyed `<namespace>/<vcluster>`. */
  async function targetsAt(sha: string): Promise<Map<string, Target>> {
    const targets = new Map<string, Target>();
    for (const entry of await listTree(workdir, sha, TENANTS_ROOT)) {
      const ref = parseVclusterPath(entry.path);
      if (!ref) {
        log.warn({ path: entry.path }, 'fleet file outside a valid tenants/<tenant>/<namespace>/<vcluster>/ folder: ignored');
        continue;
      }
      if (!ref.rest || !MANIFEST_FILE.test(ref.rest)) continue;
      const key = `${ref.namespace}/${ref.vcluster}`;
      let target = targets.get(key);
      if (!target) {
        target = { namespace: ref.namespace, vcluster: ref.vcluster, folder: ref.folder, tenants: new Set(), entries: [], hash: '' };
        targets.set(key, target);
      }
      target.tenants.add(ref.tenantId);
      target.entries.push(entry);
    }
    for (const target of targets.values()) target.hash = hashEntries(target.entries);
    return targets;
  }

  async function ensureNamespace(clients: KubeClients, name: string): Promise<void> {
    try {
      await clients.core.readNamespace({ name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await clients.core.createNamespace({ body: { metadata: { name } } });
      } catch (createError) {
        if (kubeStatus(createError) !== 409) throw createError;
      }
    }
  }

  async function readKustomization(clients: KubeClients): Promise<KustomizationObject | undefined> {
    try {
      return (await clients.custom.getNamespacedCustomObject({ ...KUSTOMIZATION })) as KustomizationObject;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** Creates or updates `flux-system/fleet` and writes its status through the status subresource. */
  async function writeKustomization(
    clients: KubeClients,
    live: KustomizationObject | undefined,
    folder: string,
    status: { revision: string; ok: boolean; message: string; inventory?: { id: string; v: string }[] },
  ): Promise<void> {
    const spec = {
      interval: `${Math.max(1, Math.round(intervalMs / 1000))}s`,
      path: `./${folder}`,
      prune: true,
      sourceRef: { kind: 'GitRepository', name: 'fleet', namespace: KUSTOMIZATION.namespace },
    };
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    let current = live;
    if (!current) {
      await ensureNamespace(clients, KUSTOMIZATION.namespace);
      try {
        current = (await clients.custom.createNamespacedCustomObject({
          ...KUSTOMIZATION,
          body: {
            apiVersion: `${KUSTOMIZATION.group}/${KUSTOMIZATION.version}`,
            kind: 'Kustomization',
            metadata: { name: KUSTOMIZATION.name, namespace: KUSTOMIZATION.namespace, labels: { 'app.kubernetes.io/managed-by': 'cloudops-local-applier' } },
            spec,
          },
        })) as KustomizationObject;
      } catch (error) {
        if (kubeStatus(error) !== 409) throw error;
        current = await readKustomization(clients);
      }
    } else if (current.spec?.path !== spec.path) {
      current = (await clients.custom.patchNamespacedCustomObject({ ...KUSTOMIZATION, body: { spec } }, merge)) as KustomizationObject;
    }
    const previousReady = current?.status?.conditions?.find((c) => c.type === 'Ready');
    const readyStatus = status.ok ? 'True' : 'False';
    const now = new Date().toISOString();
    const generation = current?.metadata?.generation ?? 1;
    const body: Record<string, unknown> = {
      observedGeneration: generation,
      lastAttemptedRevision: status.revision,
      lastHandledReconcileAt: now,
      conditions: [
        {
          type: 'Ready',
          status: readyStatus,
          reason: status.ok ? 'ReconciliationSucceeded' : 'ReconciliationFailed',
          message: status.message.slice(0, 2000),
          lastTransitionTime: previousReady?.status === readyStatus && previousReady.lastTransitionTime ? previousReady.lastTransitionTime : now,
          observedGeneration: generation,
        },
      ],
    };
    if (status.ok) body.lastAppliedRevision = status.revision;
    if (status.inventory) body.inventory = { entries: status.inventory };
    await clients.custom.patchNamespacedCustomObjectStatus({ ...KUSTOMIZATION, body: { status: body } }, merge);
  }

  /** Applies a folder's manifests to its virtual cluster, prunes, and writes the Kustomization. */
  async function applyCluster(clients: KubeClients, target: Target, files: Map<string, string>, revision: string): Promise<{ applied: number; pruned: number }> {
    const live = await readKustomization(clients);
    const previous = (live?.status?.inventory?.entries ?? []).filter((e) => typeof e?.id === 'string' && typeof e?.v === 'string');
    const objects = objectsOf(clients);
    const errors: string[] = [];
    const inventory = new Map<string, { id: string; v: string }>();
    let applied = 0;
    let pruned = 0;

    let manifests: Manifest[] = [];
    try {
      if (target.tenants.size > 1) throw new Error(`virtual cluster ${target.namespace}/${target.vcluster} appears under several tenants (${[...target.tenants].join(', ')}): nothing applied`);
      manifests = parseManifests(target.entries.map((e) => ({ path: e.path, text: files.get(e.object) ?? '' })));
    } catch (error) {
      errors.push((error as Error).message);
    }

    if (errors.length === 0) {
      // Scope of every kind, default namespace, labels; then the namespaces they need.
      const declaredNamespaces = new Set(manifests.filter((m) => m.object.kind === 'Namespace' && m.object.apiVersion === 'v1').map((m) => m.object.metadata!.name!));
      const needed = new Set<string>();
      const ready: Manifest[] = [];
      for (const manifest of manifests) {
        const { object } = manifest;
        const metadata = object.metadata!;
        let resource: V1APIResource | undefined;
        try {
          resource = await objects.discover(object.apiVersion!, object.kind!);
        } catch (error) {
          // A CRD applied in this same pass may define it: treated as namespaced, checked at apply.
          if (kubeStatus(error) !== 404) throw error;
        }
        const definedHere = manifests.some((m) => m.object.kind === 'CustomResourceDefinition');
        const namespaced = resource ? resource.namespaced : definedHere ? true : undefined;
        if (namespaced === undefined) {
          errors.push(`${manifest.source}: ${object.kind} (${object.apiVersion}) is not served by the virtual cluster`);
          continue;
        }
        if (namespaced) {
          metadata.namespace = metadata.namespace || 'default';
          if (!declaredNamespaces.has(metadata.namespace)) needed.add(metadata.namespace);
        } else {
          delete metadata.namespace;
        }
        metadata.labels = { ...(metadata.labels ?? {}), [FLUX_NAME_LABEL]: KUSTOMIZATION.name, [FLUX_NAMESPACE_LABEL]: KUSTOMIZATION.namespace };
        delete metadata.resourceVersion;
        delete metadata.uid;
        delete metadata.managedFields;
        delete metadata.creationTimestamp;
        ready.push(manifest);
      }
      const ids = new Set<string>();
      for (const manifest of ready) {
        const { id } = inventoryId(manifest.object);
        if (ids.has(id)) errors.push(`${manifest.source}: ${manifest.object.kind} ${manifest.object.metadata!.namespace ?? ''}/${manifest.object.metadata!.name} is defined twice`);
        ids.add(id);
      }

      if (errors.length === 0) {
        const ordered = ready
          .map((m, index) => ({ m, index }))
          .sort((a, b) => kindRank(a.m.object.kind!) - kindRank(b.m.object.kind!) || a.index - b.index)
          .map(({ m }) => m);
        let namespacesDone = false;
        for (const manifest of ordered) {
          if (!namespacesDone && kindRank(manifest.object.kind!) > kindRank('Namespace')) {
            for (const namespace of needed) await ensureNamespace(clients, namespace);
            namespacesDone = true;
          }
          try {
            await objects.patch(manifest.object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
            inventory.set(inventoryId(manifest.object).id, inventoryId(manifest.object));
            applied++;
          } catch (error) {
            if (kubeStatus(error) === undefined) throw error; // the cluster is not reachable: the whole folder is retried
            errors.push(`${manifest.source}: ${manifest.object.kind} ${manifest.object.metadata!.name}: ${describeKubeError(error)}`);
          }
        }
        if (!namespacesDone) for (const namespace of needed) await ensureNamespace(clients, namespace);
      }
    }

    if (errors.length === 0) {
      // Prune what was applied before and is no longer in the folder, in reverse apply order.
      const stale = previous
        .filter((entry) => !inventory.has(entry.id))
        .map((entry) => ({ entry, header: fromInventory(entry) }))
        .sort((a, b) => kindRank(b.header?.kind ?? '') - kindRank(a.header?.kind ?? ''));
      for (const { entry, header } of stale) {
        if (!header) continue;
        try {
          const current = await objects.read(header as Parameters<ScopedObjectApi['read']>[0]);
          const labels = current.metadata?.labels ?? {};
          if (labels[FLUX_NAME_LABEL] !== KUSTOMIZATION.name || labels[FLUX_NAMESPACE_LABEL] !== KUSTOMIZATION.namespace) continue;
          if (current.metadata?.annotations?.[FLUX_PRUNE_ANNOTATION] === 'disabled') continue;
          await objects.delete(header, undefined, undefined, undefined, undefined, 'Background');
          pruned++;
        } catch (error) {
          if (isNotFound(error)) continue;
          if (kubeStatus(error) === undefined) throw error;
          errors.push(`prune ${entry.id}: ${describeKubeError(error)}`);
          inventory.set(entry.id, entry); // still ours: try again next time
        }
      }
    } else {
      // Keep tracking what was applied before, so that it is pruned once the folder is fixed.
      for (const entry of previous) if (!inventory.has(entry.id)) inventory.set(entry.id, entry);
    }

    const ok = errors.length === 0;
    const message = ok ? `Applied revision: ${revision}` : errors.slice(0, 5).join('; ') + (errors.length > 5 ? `; and ${errors.length - 5} more` : '');
    await writeKustomization(clients, live, target.folder, { revision, ok, message, inventory: [...inventory.values()].sort((a, b) => a.id.localeCompare(b.id)) });
    if (!ok) throw new Error(message);
    return { applied, pruned };
  }

  async function processTarget(target: Target, sha: string, revision: string, files: () => Promise<Map<string, string>>, full: boolean): Promise<ApplierClusterResult> {
    const key = `${target.namespace}/${target.vcluster}`;
    const base = { namespace: target.namespace, vcluster: target.vcluster, folder: target.folder, applied: 0, pruned: 0 };
    const known = state.get(key);
    try {
      return await virtualClients.with(target.namespace, target.vcluster, async (clients) => {
        if (target.discovered) {
          const live = await readKustomization(clients);
          if (!live) return { ...base, outcome: 'unchanged' as const };
          target.folder = (live.spec?.path ?? '').replace(/^\.\//, '') || target.folder;
          base.folder = target.folder;
        }
        if (!full && known?.ok && known.hash === target.hash) {
          if (known.sha === sha) return { ...base, outcome: 'unchanged' as const };
          const live = await readKustomization(clients);
          if (live?.status?.lastAppliedRevision && commitFromRevision(live.status.lastAppliedRevision) === known.sha) {
            await writeKustomization(clients, live, target.folder, { revision, ok: true, message: `Applied revision: ${revision}` });
            state.set(key, { ...known, sha });
            return { ...base, outcome: 'status' as const };
          }
        }
        const counts = await applyCluster(clients, target, await files(), revision);
        state.set(key, { folder: target.folder, hash: target.hash, sha, ok: true, appliedAt: Date.now() });
        log.info({ vcluster: key, folder: target.folder, revision, ...counts }, 'fleet folder applied');
        return { ...base, ...counts, outcome: 'applied' as const };
      });
    } catch (error) {
      const message = error instanceof ApiException || (error as { cause?: unknown })?.cause ? describeKubeError(error) : (error as Error)?.message ?? String(error);
      if (target.entries.length === 0 && /no kubeconfig|not ready yet/.test(message)) {
        // A virtual cluster whose folder and kubeconfig are both gone: nothing left to manage.
        state.delete(key);
        return { ...base, outcome: 'unchanged' };
      }
      state.set(key, { folder: target.folder, hash: target.hash, sha, ok: false, appliedAt: known?.appliedAt ?? 0 });
      log.warn({ vcluster: key, folder: target.folder, revision, err: message }, 'fleet folder not applied; retried on the next pass');
      return { ...base, outcome: 'failed', error: message };
    }
  }

  async function pass(): Promise<string> {
    const startedAt = new Date().toISOString();
    const sha = await fetchHead();
    if (!sha) {
      lastPass = { sha: '', revision: '', startedAt, finishedAt: new Date().toISOString(), clusters: [] };
      return '';
    }
    const revision = `${branch}@sha1:${sha}`;
    const targets = await targetsAt(sha);
    // Virtual clusters whose folder disappeared: their objects must be pruned.
    for (const [key, known] of state) {
      if (targets.has(key)) continue;
      const [namespace, vcluster] = key.split('/') as [string, string];
      targets.set(key, { namespace, vcluster, folder: known.folder, tenants: new Set(), entries: [], hash: EMPTY_HASH });
    }
    const now = Date.now();
    const resync = now - lastDiscovery >= resyncMs;
    if (resync) {
      // After a restart the applier does not remember emptied folders: find them on the host.
      try {
        for (const entry of await listVirtualClusters()) {
          const key = `${entry.namespace}/${entry.name}`;
          if (!targets.has(key)) targets.set(key, { namespace: entry.namespace, vcluster: entry.name, folder: '', tenants: new Set(), entries: [], hash: EMPTY_HASH, discovered: true });
        }
        lastDiscovery = now;
      } catch (error) {
        log.warn({ err: describeKubeError(error) }, 'local applier: cannot list virtual clusters on the host');
      }
    }

    let blobs: Promise<Map<string, string>> | undefined;
    const allObjects = [...targets.values()].flatMap((t) => t.entries.map((e) => e.object));
    const files = () => (blobs ??= readBlobs(workdir, allObjects));

    const queue = [...targets.values()];
    const results: ApplierClusterResult[] = [];
    const worker = async () => {
      for (let target = queue.shift(); target; target = queue.shift()) {
        const known = state.get(`${target.namespace}/${target.vcluster}`);
        const full = !known || now - known.appliedAt >= resyncMs;
        const result = await processTarget(target, sha, revision, files, full);
        // A virtual cluster found on the host that the applier never managed is not reported.
        if (!(target.discovered && result.outcome === 'unchanged' && !state.has(`${target.namespace}/${target.vcluster}`))) results.push(result);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
    results.sort((a, b) => `${a.namespace}/${a.vcluster}`.localeCompare(`${b.namespace}/${b.vcluster}`));
    lastPass = { sha, revision, startedAt, finishedAt: new Date().toISOString(), clusters: results };
    return sha;
  }

  // --- scheduling: one pass at a time; sync() callers during a pass share the next one ------
  let running: Promise<string> | undefined;
  let next: Promise<string> | undefined;
  function sync(): Promise<string> {
    if (next) return next;
    if (!running) {
      running = pass().finally(() => {
        running = undefined;
      });
      return running;
    }
    next = running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return sync();
      });
    return next;
  }

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    try {
      await sync();
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'local applier pass failed');
    }
    if (!stopped && intervalMs > 0) {
      timer = setTimeout(tick, intervalMs);
      timer.unref();
    }
  };
  if (intervalMs > 0) {
    timer = setTimeout(tick, 0);
    timer.unref();
  }
  log.info({ intervalMs, workdir }, 'local applier started');

  return {
    sync,
    get lastPass() {
      return lastPass;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.allSettled([running, next]);
    },
  };
}

