/**
 * The Kubernetes REST API of one simulated cluster: discovery, the verbs on every resource
 * (get, list, watch, create, update, patch, delete, deletecollection), the `status` and `scale`
 * subresources, pod logs and metrics.k8s.io. Paths and answers follow the real API server:
 *
 *   /api/v1/{resource}                         /apis/{group}/{version}/{resource}
 *   /api/v1/namespaces/{ns}/{resource}/{name}[/status|/scale|/log]
 *   /api/v1/watch/...                          (legacy watch paths)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { PATCH_TYPES, type DeleteOptions, type SimCluster } from './cluster.js';
import { getNodeMetrics, getPodMetrics, listNodeMetrics, listPodMetrics } from './metrics.js';
import { openApiGroupVersion, openApiRoot } from './openapi.js';
import { jsonPatch, mergePatch, PatchError } from './patch.js';
import type { ResourceType } from './resources.js';
import { formatLabelSelector, fromLabelSelectorObject, matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, type FieldSelector } from './selectors.js';
import { errors, StatusError, successStatus } from './status.js';
import { toJson, toListItemJson } from './store.js';
import { toTable, wantsTable } from './table.js';
import { isPlainObject, type StoredObject, type WatchEventType } from './types.js';

/** Larger bodies are refused with 413, as the API server refuses them (its limit is 3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** A watcher this far behind is cut off rather than buffered without end. */
const MAX_WATCH_BACKLOG_BYTES = 32 * 1024 * 1024;

export const KUBE_SIM_VERSION = {
  major: '1',
  minor: '31',
  gitVersion: 'v1.31.0-kube-sim',
  gitCommit: 'kube-sim',
  gitTreeState: 'clean',
  buildDate: '2024-08-13T00:00:00Z',
  goVersion: 'go1.22.5',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export interface ApiRequest {
  method: string;
  /** The path inside the cluster (a virtual cluster's prefix removed), percent-encoded. */
  path: string;
  query: URLSearchParams;
  req: IncomingMessage;
  res: ServerResponse;
  /** `host:port`, for `GET /api`. */
  serverAddress: string;
}

export function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-cache, private' });
  res.end(body);
}

export function sendError(res: ServerResponse, error: StatusError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error.details?.retryAfterSeconds) res.setHeader('Retry-After', String(error.details.retryAfterSeconds));
  sendJson(res, error.code, JSON.stringify(error.toStatus()));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw errors.tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseBody(raw: string, contentType: string | undefined): unknown {
  if (!raw.trim()) throw errors.badRequest('the request body is empty');
  try {
    return /yaml/i.test(contentType ?? '') ? parseYaml(raw) : JSON.parse(raw);
  } catch (error) {
    throw errors.badRequest(`the body of the request could not be decoded: ${(error as Error).message}`);
  }
}

function flag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v === 'true' || v === '1';
}

function dryRun(query: URLSearchParams): boolean {
  const v = query.get('dryRun');
  if (v === null || v === '') return false;
  if (v !== 'All') throw errors.badRequest(`unsupported dryRun value "${v}": only "All" is supported`);
  return true;
}

/** An object as served under `type`'s version (versions of a custom resource share storage). */
function objectJson(type: ResourceType, object: StoredObject): string {
  return object.apiVersion === type.apiVersion ? toJson(object) : JSON.stringify({ ...object, apiVersion: type.apiVersion });
}

function listJson(type: ResourceType, items: StoredObject[], meta: { resourceVersion: string; continueToken?: string; remainingItemCount?: number }): string {
  const parts = items.map((o) => (o.apiVersion !== type.apiVersion ? JSON.stringify({ ...o, apiVersion: type.apiVersion }) : type.builtin ? toListItemJson(o) : toJson(o)));
  const metadata = JSON.stringify({
    resourceVersion: meta.resourceVersion,
    ...(meta.continueToken ? { continue: meta.continueToken, remainingItemCount: meta.remainingItemCount } : {}),
  });
  return `{"kind":${JSON.stringify(type.listKind)},"apiVersion":${JSON.stringify(type.apiVersion)},"metadata":${metadata},"items":[${parts.join(',')}]}`;
}

/** The CRD of a custom resource type (its name is the storage key), for its printer columns. */
function crdOf(cluster: SimCluster, type: ResourceType): StoredObject | undefined {
  return type.builtin ? undefined : cluster.store.get('customresourcedefinitions.apiextensions.k8s.io', '', type.storageKey);
}

function tableJson(cluster: SimCluster, request: ApiRequest, type: ResourceType, items: StoredObject[], resourceVersion: string): string {
  return JSON.stringify(toTable(type, items, resourceVersion, crdOf(cluster, type), request.query.get('includeObject')));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw errors.badRequest(`malformed path segment "${segment}"`);
  }
}

interface Target {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
  watch: boolean;
}

/** Answers one request for `cluster`; every failure becomes a Status answer. */
export async function handleApi(cluster: SimCluster, request: ApiRequest): Promise<void> {
  try {
    await route(cluster, request);
  } catch (error) {
    if (error instanceof StatusError) {
      sendError(request.res, error);
      return;
    }
    cluster.logger.error({ err: error, method: request.method, path: request.path }, 'kube-sim: request failed');
    sendError(request.res, errors.internal((error as Error).message ?? String(error)));
  }
}

async function route(cluster: SimCluster, request: ApiRequest): Promise<void> {
  const { method, res } = request;
  const segments = request.path.split('/').filter(Boolean).map(safeDecode);
  const path = `/${segments.join('/')}`;
  const get = method === 'GET' || method === 'HEAD';

  switch (path) {
    case '/version':
      if (!get) throw errors.methodNotAllowed();
      return sendJson(res, 200, JSON.stringify(KUBE_SIM_VERSION));
    case '/healthz':
    case '/livez':
    case '/readyz':
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    case '/api':
      if (!get) throw errors.methodNotAllowed();
      return sendJson(res, 200, JSON.stringify(cluster.registry.apiVersions(request.serverAddress)));
    case '/apis':
      if (!get) throw errors.methodNotAllowed();
      return sendJson(res, 200, JSON.stringify(cluster.registry.apiGroupList()));
    case '/openapi/v3':
      if (!get) throw errors.methodNotAllowed();
      return sendJson(res, 200, JSON.stringify(openApiRoot(cluster.registry, cluster.registry.groupVersions())));
  }
  if (segments[0] === 'openapi' && segments[1] === 'v3' && get) {
    const [, , root, ...gv] = segments;
    const group = root === 'apis' ? gv[0] : '';
    const version = root === 'apis' ? gv[1] : gv[0];
    if ((root !== 'api' && root !== 'apis') || version === undefined || group === undefined || !cluster.registry.hasGroupVersion(group, version)) throw errors.pathNotFound();
    return sendJson(res, 200, JSON.stringify(openApiGroupVersion(cluster.registry.allTypes(), group, version)));
  }

  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 2) {
    group = '';
    version = segments[1]!;
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 2) {
    group = segments[1]!;
    if (segments.length === 2) {
      const doc = cluster.registry.apiGroupDocument(group);
      if (!doc) throw errors.pathNotFound();
      if (!get) throw errors.methodNotAllowed();
      return sendJson(res, 200, JSON.stringify(doc));
    }
    version = segments[2]!;
    rest = segments.slice(3);
  } else {
    throw errors.pathNotFound();
  }
  if (!cluster.registry.hasGroupVersion(group, version)) throw errors.pathNotFound();
  if (rest.length === 0) {
    if (!get) throw errors.methodNotAllowed();
    return sendJson(res, 200, JSON.stringify(cluster.registry.resourceList(group, version)));
  }

  const target = resolveTarget(cluster, group, version, rest);
  if (target.type.virtual) return serveMetrics(cluster, request, target);
  if (target.subresource === 'log') return serveLogs(cluster, request, target);
  if (target.subresource === 'scale') return serveScale(cluster, request, target);
  return serveResource(cluster, request, target);
}

function resolveTarget(cluster: SimCluster, group: string, version: string, input: string[]): Target {
  let rest = input;
  let watch = false;
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(rest.length === 3 && (rest[2] === 'status' || rest[2] === 'finalize'))) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) throw errors.pathNotFound();
  const [plural, name, subresource] = rest as [string, string | undefined, string | undefined];
  const type = cluster.registry.lookup(group, version, plural);
  if (!type) throw errors.pathNotFound();
  if (namespace !== undefined && !type.namespaced) throw errors.pathNotFound();
  if (subresource !== undefined) {
    const known = (subresource === 'status' && type.status) || (subresource === 'scale' && type.scale) || (subresource === 'log' && type.storageKey === 'pods');
    if (!known) throw errors.pathNotFound();
  }
  if (name !== undefined && type.namespaced && namespace === undefined) throw errors.pathNotFound();
  return { type, namespace, name, subresource, watch };
}

async function serveResource(cluster: SimCluster, request: ApiRequest, target: Target): Promise<void> {
  const { method, query, res, req } = request;
  const { type, name } = target;
  const namespace = target.namespace ?? '';
  const status = target.subresource === 'status' ? ({ subresource: 'status' } as const) : {};

  if (name === undefined) {
    switch (method) {
      case 'GET':
      case 'HEAD':
        if (target.watch || flag(query, 'watch')) return serveWatch(cluster, request, type, target.namespace, []);
        return serveList(cluster, request, type, target.namespace);
      case 'POST': {
        const body = parseBody(await readBody(req), req.headers['content-type']);
        const created = cluster.create(type, body, { namespace: target.namespace, dryRun: dryRun(query) });
        return sendJson(res, 201, objectJson(type, created));
      }
      case 'DELETE': {
        const raw = await readBody(req);
        const options = deleteOptions(query, raw, req.headers['content-type']);
        const removed = cluster.deleteCollection(type, {
          namespace: target.namespace,
          labelSelector: parseLabelSelector(query.get('labelSelector')),
          fieldSelector: parseFieldSelector(query.get('fieldSelector')),
          ...options,
        });
        return sendJson(res, 200, listJson(type, removed, { resourceVersion: String(cluster.store.currentRv()) }));
      }
      default:
        throw errors.methodNotAllowed();
    }
  }

  switch (method) {
    case 'GET':
    case 'HEAD':
      if (target.watch || flag(query, 'watch')) {
        if (target.subresource) throw errors.methodNotAllowed();
        return serveWatch(cluster, request, type, target.namespace, parseFieldSelector(`metadata.name=${name.replace(/([,=\\])/g, '\\$1')}`));
      }
      if (!target.subresource && wantsTable(req.headers.accept)) {
        const object = cluster.get(type, namespace, name);
        return sendJson(res, 200, tableJson(cluster, request, type, [object], object.metadata.resourceVersion));
      }
      return sendJson(res, 200, objectJson(type, cluster.get(type, namespace, name)));
    case 'PUT': {
      const body = parseBody(await readBody(req), req.headers['content-type']);
      const updated = cluster.replace(type, namespace, name, body, { ...status, dryRun: dryRun(query) });
      return sendJson(res, 200, objectJson(type, updated));
    }
    case 'PATCH': {
      const raw = await readBody(req);
      const fieldManager = query.get('fieldManager') ?? undefined;
      const { object, created } = cluster.patch(type, namespace, name, req.headers['content-type'] ?? '', raw, { ...status, dryRun: dryRun(query), fieldManager });
      return sendJson(res, created ? 201 : 200, objectJson(type, object));
    }
    case 'DELETE': {
      if (target.subresource) throw errors.methodNotAllowed();
      const raw = await readBody(req);
      const { object, immediate } = cluster.delete(type, namespace, name, deleteOptions(query, raw, req.headers['content-type']));
      if (!immediate) return sendJson(res, 202, objectJson(type, object));
      // Pods and namespaces answer with the object, as the API server does; other kinds with a Status.
      if (type.storageKey === 'pods' || type.storageKey === 'namespaces') return sendJson(res, 200, objectJson(type, object));
      return sendJson(res, 200, JSON.stringify(successStatus({ name, group: type.group || undefined, kind: type.plural, uid: object.metadata.uid })));
    }
    default:
      throw errors.methodNotAllowed();
  }
}

function deleteOptions(query: URLSearchParams, raw: string, contentType: string | undefined): DeleteOptions {
  const body = raw.trim() ? parseBody(raw, contentType) : {};
  const options = isPlainObject(body) ? body : {};
  const policy = query.get('propagationPolicy') ?? (typeof options.propagationPolicy === 'string' ? options.propagationPolicy : undefined);
  if (policy !== undefined && policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
    throw errors.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
      { field: 'propagationPolicy', type: 'Unsupported value', value: policy, detail: 'supported values: "Foreground", "Background", "Orphan", "nil"' },
    ]);
  }
  const pre = isPlainObject(options.preconditions) ? (options.preconditions as { uid?: string; resourceVersion?: string }) : undefined;
  const dry = dryRun(query) || (Array.isArray(options.dryRun) && options.dryRun.includes('All'));
  return { propagationPolicy: policy as DeleteOptions['propagationPolicy'], preconditions: pre, dryRun: dry };
}

function serveList(cluster: SimCluster, request: ApiRequest, type: ResourceType, namespace: string | undefined): void {
  const { query } = request;
  const limit = query.get('limit');
  if (limit !== null && limit !== '' && !/^\d+$/.test(limit)) throw errors.badRequest(`invalid limit "${limit}"`);
  const result = cluster.list(type, {
    namespace,
    labelSelector: parseLabelSelector(query.get('labelSelector')),
    fieldSelector: parseFieldSelector(query.get('fieldSelector')),
    limit: limit ? Number(limit) : undefined,
    continueToken: query.get('continue') || undefined,
  });
  if (wantsTable(request.req.headers.accept)) return sendJson(request.res, 200, tableJson(cluster, request, type, result.items, result.resourceVersion));
  sendJson(request.res, 200, listJson(type, result.items, result));
}

/**
 * A watch: newline-delimited `{"type","object"}` events, BOOKMARKs every `bookmarkIntervalMs`
 * when asked for, ended by `timeoutSeconds`, the client, or the cluster going away. A
 * resourceVersion older than the kept history answers 200 with one ERROR event carrying a 410
 * Expired Status, then ends — what the API server's watch cache does.
 */
function serveWatch(cluster: SimCluster, request: ApiRequest, type: ResourceType, namespace: string | undefined, extraFields: FieldSelector): void {
  const { query, res, req } = request;
  const labels = parseLabelSelector(query.get('labelSelector'));
  const fields = [...parseFieldSelector(query.get('fieldSelector')), ...extraFields];
  const rvParam = query.get('resourceVersion');
  let fromRv: number | undefined;
  if (rvParam !== null && rvParam !== '' && rvParam !== '0') {
    if (!/^\d+$/.test(rvParam)) throw errors.badRequest(`invalid resource version "${rvParam}"`);
    fromRv = Number(rvParam);
  }
  const timeoutParam = query.get('timeoutSeconds');
  const timeoutSeconds = timeoutParam && /^\d+$/.test(timeoutParam) ? Number(timeoutParam) : 0;

  res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  req.socket.setNoDelay(true);

  const table = wantsTable(req.headers.accept);
  const render = (object: StoredObject) => (table ? tableJson(cluster, request, type, [object], object.metadata.resourceVersion) : objectJson(type, object));
  let lastRv = fromRv ?? cluster.store.currentRv();
  let closed = false;
  const cleanups: (() => void)[] = [];
  const finish = (destroy: boolean) => {
    if (closed) return;
    closed = true;
    for (const c of cleanups) c();
    cluster.streams.delete(stream);
    if (destroy) res.destroy();
    else res.end();
  };
  const stream = { close: () => finish(true) };

  const send = (eventType: WatchEventType | 'BOOKMARK' | 'ERROR', objectJsonText: string) => {
    if (closed) return;
    res.write(`{"type":"${eventType}","object":${objectJsonText}}\n`);
    if (res.writableLength > MAX_WATCH_BACKLOG_BYTES) finish(true);
  };

  try {
    const stop = cluster.store.watch(
      type.storageKey,
      {
        namespace: type.namespaced ? namespace : undefined,
        matches: (o) => matchesLabels(labels, o.metadata.labels) && matchesFields(fields, o),
        send: (eventType, object) => {
          lastRv = Math.max(lastRv, Number(object.metadata.resourceVersion));
          send(eventType, render(object));
        },
      },
      fromRv,
    );
    cleanups.push(stop);
  } catch (error) {
    if (error instanceof StatusError) {
      send('ERROR', JSON.stringify(error.toStatus()));
      finish(false);
      return;
    }
    throw error;
  }

  cluster.streams.add(stream);
  res.on('close', () => finish(false));
  if (flag(query, 'allowWatchBookmarks')) {
    cleanups.push(
      cluster.timers.every(cluster.options.bookmarkIntervalMs, () => {
        lastRv = Math.max(lastRv, cluster.store.currentRv());
        send('BOOKMARK', JSON.stringify({ kind: type.kind, apiVersion: type.apiVersion, metadata: { resourceVersion: String(lastRv) } }));
      }),
    );
  }
  if (timeoutSeconds > 0) cleanups.push(cluster.timers.after(timeoutSeconds * 1000, () => finish(false)));
}

/** `2024-05-01T10:00:00.123000000Z`: the RFC 3339 nanosecond timestamps of `kubectl logs --timestamps`. */
function logTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000000Z`;
}

function serveLogs(cluster: SimCluster, request: ApiRequest, target: Target): void {
  const { query, res, req, method } = request;
  if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed();
  const namespace = target.namespace!;
  const name = target.name!;
  const pod = cluster.get(target.type, namespace, name);
  const containers = ((pod.spec?.containers ?? []) as { name: string }[]).map((c) => c.name);
  let container = query.get('container') || undefined;
  if (!container) {
    if (containers.length !== 1) throw errors.badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
    container = containers[0]!;
  }
  if (!containers.includes(container)) throw errors.badRequest(`container ${container} is not valid for pod ${name}`);
  const status = (pod.status?.containerStatuses as { name: string; restartCount?: number; state?: { waiting?: { reason?: string } } }[] | undefined)?.find((c) => c.name === container);
  const waiting = status?.state?.waiting?.reason;
  if (!status || (waiting && waiting !== 'CrashLoopBackOff' && !status.restartCount)) {
    const why = waiting === 'ImagePullBackOff' || waiting === 'ErrImagePull' ? 'trying and failing to pull image' : (waiting ?? 'ContainerCreating');
    throw errors.badRequest(`container "${container}" in pod "${name}" is waiting to start: ${why}`);
  }

  const timestamps = flag(query, 'timestamps');
  const format = (line: { at: number; text: string }) => `${timestamps ? `${logTimestamp(line.at)} ` : ''}${line.text}\n`;
  let lines = cluster.logs.lines(namespace, name, container);
  const sinceSeconds = query.get('sinceSeconds');
  const sinceTime = query.get('sinceTime');
  if (sinceSeconds && sinceTime) throw errors.badRequest('at most one of sinceTime or sinceSeconds may be specified');
  let since: number | undefined;
  if (sinceSeconds) {
    if (!/^\d+$/.test(sinceSeconds) || Number(sinceSeconds) < 1) throw errors.badRequest(`sinceSeconds must be a positive integer, got "${sinceSeconds}"`);
    since = Date.now() - Number(sinceSeconds) * 1000;
  } else if (sinceTime) {
    since = Date.parse(sinceTime);
    if (Number.isNaN(since)) throw errors.badRequest(`sinceTime must be an RFC 3339 time, got "${sinceTime}"`);
  }
  if (since !== undefined) lines = lines.filter((l) => l.at >= since!);
  const tail = query.get('tailLines');
  if (tail !== null && tail !== '') {
    if (!/^\d+$/.test(tail)) throw errors.badRequest(`tailLines must be a non-negative integer, got "${tail}"`);
    lines = Number(tail) === 0 ? [] : lines.slice(-Number(tail));
  }
  const limitParam = query.get('limitBytes');
  let budget = limitParam && /^\d+$/.test(limitParam) ? Number(limitParam) : Infinity;
  const take = (text: string): string => {
    if (budget === Infinity) return text;
    const bytes = Buffer.from(text);
    const out = bytes.subarray(0, Math.max(0, budget)).toString('utf8');
    budget -= bytes.length;
    return out;
  };

  const text = take(lines.map(format).join(''));
  if (!flag(query, 'follow')) {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
    return;
  }

  // Follow: the lines so far, then each new line as it is written, until the pod goes or the client does.
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
  req.socket.setNoDelay(true);
  if (text) res.write(text);
  else res.flushHeaders();
  let closed = false;
  const finish = (destroy: boolean) => {
    if (closed) return;
    closed = true;
    unfollow();
    cluster.streams.delete(stream);
    if (destroy) res.destroy();
    else res.end();
  };
  const stream = { close: () => finish(true) };
  const unfollow = cluster.logs.follow(namespace, name, container, {
    line: (line) => {
      const chunk = take(format(line));
      if (chunk) res.write(chunk);
      if (budget <= 0) finish(false);
    },
    end: () => finish(false),
  });
  cluster.streams.add(stream);
  res.on('close', () => finish(false));
  if (budget <= 0) finish(false);
}

function scaleOf(type: ResourceType, object: StoredObject): Record<string, unknown> {
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      uid: object.metadata.uid,
      resourceVersion: object.metadata.resourceVersion,
      creationTimestamp: object.metadata.creationTimestamp,
    },
    spec: { replicas: object.spec?.replicas ?? (type.storageKey === 'deployments.apps' ? 1 : 0) },
    status: { replicas: object.status?.replicas ?? 0, selector: formatLabelSelector(fromLabelSelectorObject(object.spec?.selector)) },
  };
}

async function serveScale(cluster: SimCluster, request: ApiRequest, target: Target): Promise<void> {
  const { method, req, res, query } = request;
  const { type } = target;
  const namespace = target.namespace!;
  const name = target.name!;
  const existing = cluster.get(type, namespace, name);
  const current = scaleOf(type, existing);
  if (method === 'GET') return sendJson(res, 200, JSON.stringify(current));
  let desired: unknown;
  if (method === 'PUT') {
    desired = parseBody(await readBody(req), req.headers['content-type']);
  } else if (method === 'PATCH') {
    const raw = await readBody(req);
    const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    let patch: unknown;
    try {
      patch = mediaType === PATCH_TYPES.apply ? parseYaml(raw) : JSON.parse(raw);
    } catch (error) {
      throw errors.badRequest(`error decoding patch: ${(error as Error).message}`);
    }
    try {
      if (mediaType === PATCH_TYPES.json) desired = jsonPatch(current, patch);
      else if (mediaType === PATCH_TYPES.merge || mediaType === PATCH_TYPES.strategic || mediaType === PATCH_TYPES.apply) desired = mergePatch(current, patch);
      else throw errors.unsupportedMediaType(Object.values(PATCH_TYPES));
    } catch (error) {
      if (error instanceof PatchError) throw error.malformed ? errors.badRequest(error.message) : errors.unprocessable(error.message);
      throw error;
    }
  } else {
    throw errors.methodNotAllowed();
  }
  if (!isPlainObject(desired) || !isPlainObject(desired.spec)) throw errors.badRequest('a Scale must have a spec');
  const replicas = desired.spec.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid({ group: 'autoscaling', kind: 'Scale' }, name, [{ field: 'spec.replicas', type: 'Invalid value', value: replicas, detail: 'must be greater than or equal to 0' }]);
  }
  const rv = isPlainObject(desired.metadata) ? desired.metadata.resourceVersion : undefined;
  if (typeof rv === 'string' && rv !== '' && rv !== existing.metadata.resourceVersion) throw errors.conflict(type, name);
  const next = structuredClone(existing);
  next.spec = { ...next.spec, replicas };
  const updated = cluster.replace(type, namespace, name, next, { dryRun: dryRun(query) });
  sendJson(res, 200, JSON.stringify(scaleOf(type, updated)));
}

function serveMetrics(cluster: SimCluster, request: ApiRequest, target: Target): void {
  const { method, query, res } = request;
  if (method !== 'GET') throw errors.methodNotAllowed();
  if (target.watch || flag(query, 'watch')) throw errors.methodNotAllowed();
  const labels = parseLabelSelector(query.get('labelSelector'));
  const nodes = target.type.kind === 'NodeMetrics';
  if (target.name === undefined) {
    return sendJson(res, 200, JSON.stringify(nodes ? listNodeMetrics(cluster, labels) : listPodMetrics(cluster, target.namespace, labels)));
  }
  const found = nodes ? getNodeMetrics(cluster, target.name) : getPodMetrics(cluster, target.namespace!, target.name);
  if (!found) throw errors.notFound({ group: 'metrics.k8s.io', plural: target.type.plural }, target.name);
  sendJson(res, 200, JSON.stringify(found));
}
