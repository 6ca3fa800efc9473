/**
 * One simulated cluster (the host, or a virtual cluster): its kinds, its objects and the rules of
 * the API server for writing them (names, generateName, uid, generation, resourceVersion
 * preconditions, the status subresource, defaulting, validation, admission, finalizers and
 * garbage collection), plus the simulated controllers that bring it to life.
 *
 * The HTTP layer (`api.ts`) and the controllers go through the same methods, so a controller's
 * write is checked, versioned and watched exactly like a client's.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { parse as parseYaml } from 'yaml';
import { startControllers, type Controller } from './controllers/index.js';
import { applyDefaults } from './defaults.js';
import { EventRecorder } from './events.js';
import { LogBook } from './logs.js';
import { canonical, jsonPatch, mergePatch, PatchError, pruneUnapplied, strategicMergePatch } from './patch.js';
import { builtinTypes, platformCrds, ResourceRegistry, typesFromCrd, type ResourceType } from './resources.js';
import { matchesFields, matchesLabels, selectedName, type FieldSelector, type LabelSelector } from './selectors.js';
import { errors, StatusError, type FieldError } from './status.js';
import { byNamespaceAndName, ObjectStore } from './store.js';
import { Timers } from './timers.js';
import { isPlainObject, timestamp, type KubeObject, type StoredObject } from './types.js';
import { nameErrors, validateObject } from './validation.js';

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** What the simulation of one cluster needs; `index.ts` documents each as a public option. */
export interface SimClusterOptions {
  /** `host`, or `<namespace>/<name>` for a virtual cluster. */
  name: string;
  /** Bearer token every request must carry; undefined accepts any request. */
  token?: string;
  podReadyDelayMs: number;
  clusterPhaseDelayMs: number;
  nodes: number;
  logIntervalMs: number;
  crashLoopIntervalMs: number;
  progressDeadlineFactor: number;
  watchHistorySize: number;
  bookmarkIntervalMs: number;
  logger: Logger;
  /** Only on the host: serves the virtual clusters of Cluster API clusters. */
  virtualClusters?: VirtualClusterProvider;
}

export interface VirtualClusterAccess {
  server: string;
  token: string;
  kubeconfig: string;
}

export interface VirtualClusterProvider {
  ensure(namespace: string, name: string): VirtualClusterAccess;
  remove(namespace: string, name: string): void;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continueToken?: string;
}

export interface ListResult {
  items: StoredObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export interface WriteOptions {
  dryRun?: boolean;
  subresource?: 'status';
}

export interface DeleteOptions {
  dryRun?: boolean;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** Checks run before an object is stored; they throw a Status (403 Forbidden for quotas). */
export type Admitter = (operation: 'create' | 'update', type: ResourceType, object: KubeObject, existing?: StoredObject) => void;

/** An open watch or log stream, closed when the cluster stops or becomes unavailable. */
export interface OpenStream {
  close(): void;
}

const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5 random characters the API server appends to a generateName. */
export function randomSuffix(length = 5): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += NAME_ALPHABET[b % NAME_ALPHABET.length];
  return out;
}

/** Everything but metadata (and status where it is a subresource): what bumps `metadata.generation`. */
function specPart(type: ResourceType, object: KubeObject): string {
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(object)) {
    if (k === 'metadata' || k === 'apiVersion' || k === 'kind' || (k === 'status' && type.status)) continue;
    rest[k] = v;
  }
  return JSON.stringify(canonical(rest));
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return JSON.stringify(canonical(strip(a))) === JSON.stringify(canonical(strip(b)));
}

export class SimCluster {
  readonly registry = new ResourceRegistry();
  readonly store: ObjectStore;
  readonly timers: Timers;
  readonly logs = new LogBook();
  readonly events: EventRecorder;
  readonly logger: Logger;
  readonly streams = new Set<OpenStream>();
  available = true;
  /** How an unavailable cluster answers: a 503 Status, or a connection reset. */
  unavailableMode: 'error' | 'reset' = 'error';
  private readonly admitters: Admitter[] = [];
  /** object uid → field manager (and subresource) → what it applied last (server-side apply). */
  private readonly applied = new Map<string, Map<string, unknown>>();
  private controllers: Controller[] = [];
  private nextServiceIp = 10;
  private nextPodIp = 2;

  constructor(readonly options: SimClusterOptions) {
    this.logger = options.logger;
    this.timers = new Timers(options.logger);
    this.store = new ObjectStore(options.watchHistorySize);
    this.events = new EventRecorder(this);
  }

  get name(): string {
    return this.options.name;
  }

  /** Registers the kinds, creates the initial objects and starts the controllers. */
  start(): void {
    this.registry.register(builtinTypes());
    for (const crd of platformCrds()) this.create(this.type('customresourcedefinitions.apiextensions.k8s.io'), crd);
    this.controllers = startControllers(this);
    this.events.startExpiry();
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.create(this.type('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } } });
    }
  }

  stop(): void {
    for (const c of this.controllers) c.stop();
    this.controllers = [];
    this.timers.stop();
    this.closeStreams();
  }

  closeStreams(): void {
    for (const s of [...this.streams]) s.close();
    this.streams.clear();
  }

  setAvailable(available: boolean, mode: 'error' | 'reset' = 'error'): void {
    this.available = available;
    this.unavailableMode = mode;
    // A real API server going away ends every watch and log stream with it.
    if (!available) this.closeStreams();
  }

  admit(admitter: Admitter): void {
    this.admitters.push(admitter);
  }

  /** The served type stored under `storageKey` (`pods`, `deployments.apps`...). */
  type(storageKey: string): ResourceType {
    const t = this.registry.storageType(storageKey);
    if (!t) throw new Error(`kube-sim: no resource ${storageKey}`);
    return t;
  }

  allocatePodIp(): string {
    const n = this.nextPodIp++;
    return `10.244.${Math.floor(n / 250) % 250}.${(n % 250) + 2}`;
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  find(type: ResourceType, namespace: string, name: string): StoredObject | undefined {
    return this.store.get(type.storageKey, type.namespaced ? namespace : '', name);
  }

  get(type: ResourceType, namespace: string, name: string): StoredObject {
    const object = this.find(type, namespace, name);
    if (!object) throw errors.notFound(type, name);
    return object;
  }

  list(type: ResourceType, options: ListOptions = {}): ListResult {
    const resourceVersion = String(this.store.currentRv());
    // Cluster-scoped objects are stored under the namespace ''.
    const namespace = type.namespaced ? options.namespace : '';
    const name = options.fieldSelector ? selectedName(options.fieldSelector) : undefined;
    let items: StoredObject[];
    if (name !== undefined && namespace !== undefined) {
      const one = this.store.get(type.storageKey, namespace, name);
      items = one ? [one] : [];
    } else {
      items = this.store.list(type.storageKey, namespace);
    }
    const labels = options.labelSelector ?? [];
    const fields = options.fieldSelector ?? [];
    if (labels.length || fields.length) items = items.filter((o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o));
    items.sort(byNamespaceAndName);
    if (options.continueToken) {
      const after = decodeContinue(options.continueToken);
      items = items.filter((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}` > after);
    }
    if (options.limit && options.limit > 0 && items.length > options.limit) {
      const page = items.slice(0, options.limit);
      const last = page[page.length - 1]!;
      return {
        items: page,
        resourceVersion,
        continueToken: encodeContinue(`${last.metadata.namespace ?? ''}/${last.metadata.name}`, resourceVersion),
        remainingItemCount: items.length - page.length,
      };
    }
    return { items, resourceVersion };
  }

  // -------------------------------------------------------------------------------------------
  // Writes

  /** The request body as an object of `type`: kind and apiVersion filled in when missing, refused when different. */
  private checkBody(type: ResourceType, body: unknown): KubeObject {
    if (!isPlainObject(body)) throw errors.badRequest(`the body of the request was in an unknown format: it must be a JSON object`);
    const object = structuredClone(body) as KubeObject;
    if (object.kind !== undefined && object.kind !== type.kind) {
      throw errors.badRequest(`${String(object.kind)} in version "${String(object.apiVersion ?? type.version)}" cannot be handled as a ${type.kind}: the kind of the object does not match the resource of the request`);
    }
    if (object.apiVersion !== undefined && object.apiVersion !== type.apiVersion) {
      const other = this.registry.lookupKind(String(object.apiVersion), type.kind);
      if (!other || other.storageKey !== type.storageKey) {
        throw errors.badRequest(`the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${type.apiVersion})`);
      }
    }
    object.apiVersion ??= type.apiVersion;
    object.kind = type.kind;
    if (object.metadata === undefined || object.metadata === null) object.metadata = {};
    if (!isPlainObject(object.metadata)) throw errors.badRequest('metadata must be an object');
    return object;
  }

  private invalid(type: ResourceType, name: string, fieldErrors: FieldError[]): StatusError {
    return errors.invalid(type, name, fieldErrors);
  }

  private validate(type: ResourceType, object: KubeObject): void {
    const problems = validateObject(type, object);
    if (problems.length) throw this.invalid(type, object.metadata.name ?? '', problems);
  }

  private requireNamespace(type: ResourceType, namespace: string): void {
    if (!type.namespaced) return;
    if (!this.store.get('namespaces', '', namespace)) throw errors.notFound({ group: '', plural: 'namespaces' }, namespace);
  }

  /** POST: a new object. `namespace` is the one of the URL, if any. */
  create(type: ResourceType, body: unknown, options: WriteOptions & { namespace?: string } = {}): StoredObject {
    const object = this.checkBody(type, body);
    const meta = object.metadata;
    if (type.namespaced) {
      if (options.namespace !== undefined && meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== options.namespace) {
        throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      const namespace = options.namespace ?? meta.namespace;
      if (!namespace) throw errors.badRequest('the namespace of the object must be set for a namespaced resource');
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
    }
    if (!meta.name) {
      if (typeof meta.generateName === 'string' && meta.generateName) {
        const prefixErrors = nameErrors(type.names, `${meta.generateName}a`, 'metadata.generateName');
        if (prefixErrors.length) throw this.invalid(type, meta.generateName, prefixErrors);
        do meta.name = `${meta.generateName}${randomSuffix()}`;
        while (this.find(type, meta.namespace ?? '', meta.name));
      } else {
        throw this.invalid(type, '', [{ field: 'metadata.name', type: 'Required value', detail: 'name or generateName is required' }]);
      }
    }
    if (typeof meta.name !== 'string') throw errors.badRequest('metadata.name must be a string');
    const problems = nameErrors(type.names, meta.name);
    if (problems.length) throw this.invalid(type, meta.name, problems);
    this.requireNamespace(type, meta.namespace ?? '');
    if (this.find(type, meta.namespace ?? '', meta.name)) throw errors.alreadyExists(type, meta.name);

    meta.uid = randomUUID();
    meta.creationTimestamp = timestamp();
    meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.managedFields;
    delete meta.selfLink;
    if (type.status) delete object.status;
    applyDefaults(type, object, undefined, { allocateClusterIp: () => this.allocateServiceIp() });
    this.validate(type, object);
    for (const admit of this.admitters) admit('create', type, object);
    if (options.dryRun) return object as StoredObject;
    const stored = this.store.put(type.storageKey, object as StoredObject);
    this.afterWrite(type, stored);
    return stored;
  }

  /**
   * Puts back an object as it was saved (uid, creation time, generation and status kept; a new
   * resourceVersion), with no admission or defaults: see `snapshot.ts`. Controllers see it as
   * added, as after a restart of theirs.
   */
  restore(type: ResourceType, object: StoredObject): StoredObject {
    if (type.namespaced) this.requireNamespace(type, object.metadata.namespace ?? '');
    else delete object.metadata.namespace;
    const stored = this.store.put(type.storageKey, object);
    this.afterWrite(type, stored);
    return stored;
  }

  private allocateServiceIp(): string {
    const n = this.nextServiceIp++;
    return `10.96.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
  }

  /** PUT: replaces an object (or, with `subresource: 'status'`, only its status). */
  replace(type: ResourceType, namespace: string, name: string, body: unknown, options: WriteOptions = {}): StoredObject {
    const existing = this.get(type, namespace, name);
    const object = this.checkBody(type, body);
    if (object.metadata.name !== undefined && object.metadata.name !== name) {
      throw errors.badRequest(`the name of the object (${String(object.metadata.name)}) does not match the name on the URL (${name})`);
    }
    if (type.namespaced && object.metadata.namespace && object.metadata.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const rv = object.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== existing.metadata.resourceVersion) throw errors.conflict(type, name);
    return this.commitUpdate(type, existing, object, options);
  }

  /** Writes `next` over `existing`, keeping what clients cannot change. No change, no write. */
  private commitUpdate(type: ResourceType, existing: StoredObject, incoming: KubeObject, options: WriteOptions): StoredObject {
    let next: KubeObject;
    if (options.subresource === 'status') {
      next = { ...structuredClone(existing), status: structuredClone(incoming.status) };
      if (next.status === undefined) delete next.status;
    } else {
      next = incoming;
      next.metadata = {
        ...incoming.metadata,
        name: existing.metadata.name,
        uid: existing.metadata.uid,
        creationTimestamp: existing.metadata.creationTimestamp,
        generation: existing.metadata.generation,
        resourceVersion: existing.metadata.resourceVersion,
      };
      if (type.namespaced) next.metadata.namespace = existing.metadata.namespace;
      else delete next.metadata.namespace;
      if (existing.metadata.deletionTimestamp) {
        next.metadata.deletionTimestamp = existing.metadata.deletionTimestamp;
        next.metadata.deletionGracePeriodSeconds = existing.metadata.deletionGracePeriodSeconds;
      } else {
        delete next.metadata.deletionTimestamp;
        delete next.metadata.deletionGracePeriodSeconds;
      }
      delete next.metadata.managedFields;
      if (type.status) {
        if (existing.status === undefined) delete next.status;
        else next.status = structuredClone(existing.status);
      }
      next.apiVersion = existing.apiVersion;
      next.kind = existing.kind;
    }
    applyDefaults(type, next, existing, { allocateClusterIp: () => this.allocateServiceIp() });
    this.validate(type, next);
    if (options.subresource !== 'status' && specPart(type, existing) !== specPart(type, next)) {
      next.metadata.generation = (existing.metadata.generation ?? 1) + 1;
    }
    if (sameContent(existing, next)) return existing;
    for (const admit of this.admitters) admit('update', type, next, existing);
    if (options.dryRun) return next as StoredObject;
    if (existing.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      // The last finalizer is gone: the deletion asked for earlier completes now.
      return this.remove(type, existing, 'Background');
    }
    const stored = this.store.put(type.storageKey, next as StoredObject);
    this.afterWrite(type, stored);
    return stored;
  }

  /** Internal writes of the controllers: `object` is a modified copy of a stored object. */
  update(type: ResourceType, object: KubeObject): StoredObject {
    return this.replace(type, object.metadata.namespace ?? '', object.metadata.name!, object);
  }

  updateStatus(type: ResourceType, object: KubeObject): StoredObject {
    return this.replace(type, object.metadata.namespace ?? '', object.metadata.name!, object, { subresource: 'status' });
  }

  /** Reads the current object, lets `change` edit a copy and writes it (a no-op when nothing changed). */
  mutate(type: ResourceType, namespace: string, name: string, change: (draft: StoredObject) => void, options: { status?: boolean } = {}): StoredObject | undefined {
    const current = this.find(type, namespace, name);
    if (!current) return undefined;
    const draft = structuredClone(current);
    change(draft);
    return options.status && type.status ? this.updateStatus(type, draft) : this.update(type, draft);
  }

  /**
   * PATCH in any of the four formats. Server-side apply creates the object when it is absent;
   * `created` then says so (201).
   */
  patch(
    type: ResourceType,
    namespace: string,
    name: string,
    contentType: string,
    raw: string,
    options: WriteOptions & { fieldManager?: string } = {},
  ): { object: StoredObject; created: boolean } {
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    const accepted = [PATCH_TYPES.json, PATCH_TYPES.merge, ...(type.mergeKeys ? [PATCH_TYPES.strategic] : []), PATCH_TYPES.apply];
    if (!accepted.includes(mediaType as (typeof accepted)[number])) throw errors.unsupportedMediaType(accepted);
    let body: unknown;
    try {
      body = mediaType === PATCH_TYPES.apply ? parseYaml(raw) : JSON.parse(raw);
    } catch (error) {
      throw errors.badRequest(`error decoding patch: ${(error as Error).message}`);
    }
    const existing = this.find(type, namespace, name);
    if (mediaType === PATCH_TYPES.apply) {
      if (!options.fieldManager) {
        throw errors.invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [{ field: 'fieldManager', type: 'Required value', detail: 'is required for apply patch' }]);
      }
      if (!isPlainObject(body)) throw errors.badRequest('an apply patch must be an object');
      const meta = isPlainObject(body.metadata) ? body.metadata : {};
      if (meta.name !== undefined && meta.name !== name) throw errors.badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
      if (!existing) {
        if (options.subresource) throw errors.notFound(type, name);
        const object = this.create(type, { ...body, metadata: { ...meta, name } }, { namespace: type.namespaced ? namespace : undefined, dryRun: options.dryRun });
        if (!options.dryRun) this.rememberApplied(object.metadata.uid, options.fieldManager, options.subresource, body);
        return { object, created: true };
      }
    }
    if (!existing) throw errors.notFound(type, name);
    let patched: unknown;
    try {
      switch (mediaType) {
        case PATCH_TYPES.json:
          patched = jsonPatch(existing, body);
          break;
        case PATCH_TYPES.merge:
          patched = mergePatch(existing, body);
          break;
        case PATCH_TYPES.strategic:
          patched = strategicMergePatch(existing, body, type.mergeKeys!);
          break;
        default: {
          // Apply: what this manager applied before and no longer applies goes, then the
          // applied object is merged on (no field ownership between managers, see README).
          const previous = this.applied.get(existing.metadata.uid)?.get(`${options.fieldManager}|${options.subresource ?? ''}`);
          const base = previous === undefined ? existing : (pruneUnapplied(existing, previous, body, type.mergeKeys) as Record<string, unknown>);
          patched = type.mergeKeys ? strategicMergePatch(base, body, type.mergeKeys) : mergePatch(base, body);
        }
      }
    } catch (error) {
      if (error instanceof PatchError) throw error.malformed ? errors.badRequest(error.message) : errors.unprocessable(error.message);
      throw error;
    }
    if (!isPlainObject(patched) || !isPlainObject(patched.metadata)) throw errors.unprocessable('the patch removed the object metadata');
    const object = this.checkBody(type, patched);
    const rv = object.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== existing.metadata.resourceVersion) throw errors.conflict(type, name);
    if (object.metadata.name !== name) throw errors.badRequest(`the name of the object (${String(object.metadata.name)}) does not match the name on the URL (${name})`);
    const updated = this.commitUpdate(type, existing, object, options);
    if (mediaType === PATCH_TYPES.apply && !options.dryRun) this.rememberApplied(existing.metadata.uid, options.fieldManager, options.subresource, body);
    return { object: updated, created: false };
  }

  private rememberApplied(uid: string, fieldManager: string | undefined, subresource: string | undefined, body: unknown): void {
    let byManager = this.applied.get(uid);
    if (!byManager) this.applied.set(uid, (byManager = new Map()));
    byManager.set(`${fieldManager}|${subresource ?? ''}`, structuredClone(body));
  }

  /**
   * DELETE: objects with finalizers get a deletionTimestamp and stay until the last finalizer is
   * removed; the others go at once, with their dependents (ownerReferences) and, for a
   * namespace, everything in it. `immediate` says whether the object is gone.
   */
  delete(type: ResourceType, namespace: string, name: string, options: DeleteOptions = {}): { object: StoredObject; immediate: boolean } {
    const existing = this.get(type, namespace, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== existing.metadata.uid) {
      throw errors.conflict(type, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion) {
      throw errors.conflict(type, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`);
    }
    if (options.dryRun) return { object: existing, immediate: true };
    if ((existing.metadata.finalizers ?? []).length > 0) {
      if (existing.metadata.deletionTimestamp) return { object: existing, immediate: false };
      const marked: StoredObject = structuredClone(existing);
      marked.metadata.deletionTimestamp = timestamp();
      marked.metadata.deletionGracePeriodSeconds = 0;
      const stored = this.store.put(type.storageKey, marked);
      return { object: stored, immediate: false };
    }
    return { object: this.remove(type, existing, options.propagationPolicy ?? 'Background'), immediate: true };
  }

  /** DELETE on a collection: every selected object, as one delete each. */
  deleteCollection(type: ResourceType, options: ListOptions & DeleteOptions): StoredObject[] {
    const { items } = this.list(type, { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector });
    const out: StoredObject[] = [];
    for (const item of items) {
      if (!this.find(type, item.metadata.namespace ?? '', item.metadata.name)) continue;
      out.push(this.delete(type, item.metadata.namespace ?? '', item.metadata.name, options).object);
    }
    return out;
  }

  private remove(type: ResourceType, existing: StoredObject, propagation: 'Background' | 'Foreground' | 'Orphan'): StoredObject {
    const namespace = existing.metadata.namespace ?? '';
    if (type.storageKey === 'namespaces') {
      // Everything in the namespace goes with it (kube-sim does not keep it Terminating).
      for (const t of this.registry.storedTypes()) {
        if (!t.namespaced) continue;
        for (const o of this.store.list(t.storageKey, existing.metadata.name)) {
          if (this.store.get(t.storageKey, existing.metadata.name, o.metadata.name)) this.remove(t, o, 'Background');
        }
      }
    }
    const removed = this.store.remove(type.storageKey, namespace, existing.metadata.name);
    if (!removed) return existing;
    this.afterRemove(type, removed);
    const uid = existing.metadata.uid;
    for (const dep of this.store.dependentsOf(uid)) {
      const depType = this.registry.storageType(dep.storageKey);
      const object = this.store.get(dep.storageKey, dep.namespace, dep.name);
      if (!depType || !object) continue;
      const owners = (object.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
      if (propagation === 'Orphan' || owners.some((r) => this.ownerExists(r.uid, object))) {
        const orphan = structuredClone(object);
        orphan.metadata.ownerReferences = owners;
        if (owners.length === 0) delete orphan.metadata.ownerReferences;
        this.store.put(dep.storageKey, orphan);
      } else {
        this.delete(depType, dep.namespace, dep.name, { propagationPolicy: 'Background' });
      }
    }
    return removed;
  }

  /** Whether another owner of `dependent` still exists (owners live in the dependent's namespace or cluster-wide). */
  private ownerExists(uid: string, dependent: StoredObject): boolean {
    for (const ref of dependent.metadata.ownerReferences ?? []) {
      if (ref.uid !== uid) continue;
      const t = this.registry.lookupKind(ref.apiVersion, ref.kind);
      if (!t) return false;
      const owner = this.store.get(t.storageKey, t.namespaced ? (dependent.metadata.namespace ?? '') : '', ref.name);
      return owner?.metadata.uid === uid;
    }
    return false;
  }

  /** What a write means beyond storage: a CRD serves its kinds from the moment it is stored. */
  private afterWrite(type: ResourceType, object: StoredObject): void {
    if (type.storageKey === 'customresourcedefinitions.apiextensions.k8s.io') {
      this.registry.unregister(`${object.spec.names.plural}.${object.spec.group}`);
      this.registry.register(typesFromCrd(object));
    }
  }

  private afterRemove(type: ResourceType, object: StoredObject): void {
    if (type.storageKey === 'customresourcedefinitions.apiextensions.k8s.io') {
      const storageKey = `${object.spec.names.plural}.${object.spec.group}`;
      const served = this.registry.storageType(storageKey);
      // Deleting a CRD deletes its custom resources.
      if (served) for (const o of this.store.list(storageKey)) this.remove(served, o, 'Background');
      this.registry.unregister(storageKey);
    }
    if (type.storageKey === 'pods') this.logs.dropPod(object.metadata.namespace ?? '', object.metadata.name);
    this.applied.delete(object.metadata.uid);
  }
}

function encodeContinue(after: string, rv: string): string {
  return Buffer.from(JSON.stringify({ v: 'kube-sim/1', rv, start: after })).toString('base64url');
}

function decodeContinue(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { v?: string; start?: string };
    if (parsed.v !== 'kube-sim/1' || typeof parsed.start !== 'string') throw new Error('not a continue token');
    return parsed.start;
  } catch {
    throw errors.badRequest('continue key is not valid: the continue token was not issued by this server');
  }
}
