import { Log, type CoreV1Event, type V1Container, type V1CronJob, type V1Deployment, type V1Ingress, type V1Job, type V1ObjectMeta, type V1PersistentVolumeClaim, type V1Pod, type V1Service } from '@kubernetes/client-node';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PassThrough, type Readable } from 'node:stream';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { decodeCursor, encodeCursor, pageLimit, type PageOfRows } from '../../../kernel/pagination.js';
import { checkDnsLabel } from '../clusters/cluster.service.js';
import { clusterUnavailable, isNotFound, kubeStatus, orUndefined, type KubeClients, type VirtualClusterClients } from '../orchestrator/kube.js';
import { requireOrchestrator, type PlatformRuntime } from '../runtime.js';
import type { CloudSpace } from './cloudspace.entity.js';
import { CloudSpaceService } from './cloudspace.service.js';

/** Where an object of a CloudSpace-wide view lives; views are sorted by these, in this order. */
export interface Located {
  vcluster: string;
  namespace: string;
  name: string;
}

export interface PodView extends Located {
  /** Pending, Running, Succeeded, Failed, Unknown. */
  phase: string;
  /** What `kubectl get pods` shows as STATUS: a waiting or terminated reason, Terminating, or the phase. */
  status: string;
  /** Ready containers over containers, `1/1`. */
  ready: string;
  restarts: number;
  node: string | null;
  ip: string | null;
  images: string[];
  createdAt: Date | null;
}

export interface DeploymentView extends Located {
  replicas: number;
  ready: number;
  updated: number;
  available: number;
  images: string[];
  /** `deployment.kubernetes.io/revision` of the Deployment. */
  revision: number | null;
  createdAt: Date | null;
}

export interface ServicePortView {
  name: string | null;
  port: number;
  targetPort: string | null;
  protocol: string;
  nodePort: number | null;
}

export interface ServiceView extends Located {
  type: string;
  clusterIp: string | null;
  externalIps: string[];
  ports: ServicePortView[];
  createdAt: Date | null;
}

export interface IngressTlsView {
  hosts: string[];
  secretName: string | null;
}

export interface IngressRuleView {
  host: string | null;
  path: string;
  service: string | null;
  port: string | null;
}

export interface IngressView extends Located {
  className: string | null;
  hosts: string[];
  tls: IngressTlsView[];
  rules: IngressRuleView[];
  addresses: string[];
  createdAt: Date | null;
}

export interface PersistentVolumeClaimView extends Located {
  phase: string;
  capacity: string | null;
  requested: string | null;
  storageClass: string | null;
  accessModes: string[];
  volume: string | null;
  createdAt: Date | null;
}

export interface JobView extends Located {
  /** Running, Complete, Failed or Suspended. */
  status: string;
  completions: number | null;
  parallelism: number | null;
  succeeded: number;
  failed: number;
  active: number;
  images: string[];
  startedAt: Date | null;
  completedAt: Date | null;
  createdAt: Date | null;
}

export interface CronJobView extends Located {
  schedule: string;
  timeZone: string | null;
  suspend: boolean;
  active: number;
  lastSchedule: Date | null;
  lastSuccessfulTime: Date | null;
  images: string[];
  createdAt: Date | null;
}

export interface ObjectReferenceView {
  kind: string | null;
  name: string | null;
  namespace: string | null;
}

export interface EventView extends Located {
  /** Normal or Warning. */
  type: string;
  reason: string | null;
  message: string | null;
  involvedObject: ObjectReferenceView;
  count: number;
  source: string | null;
  firstTimestamp: Date | null;
  lastTimestamp: Date | null;
}

const dateOf = (value: Date | string | null | undefined): Date | null => {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
};

const located = (vcluster: string, metadata: V1ObjectMeta | undefined): Located => ({ vcluster, namespace: metadata?.namespace ?? '', name: metadata?.name ?? '' });
const imagesOf = (containers: V1Container[] | undefined): string[] => (containers ?? []).map((c) => c.image ?? '');
const loadBalancerAddresses = (ingress: { ip?: string; hostname?: string }[] | undefined): string[] => (ingress ?? []).map((i) => i.ip ?? i.hostname ?? '').filter(Boolean);

/** The summary of a pod in the views (also an app's pods). */
export function podView(vcluster: string, pod: V1Pod): PodView {
  const statuses = [...(pod.status?.initContainerStatuses ?? []).filter((s) => !s.ready), ...(pod.status?.containerStatuses ?? [])];
  const containers = pod.spec?.containers ?? [];
  const regular = pod.status?.containerStatuses ?? [];
  const phase = pod.status?.phase ?? 'Unknown';
  const reason = statuses.map((s) => s.state?.waiting?.reason ?? s.state?.terminated?.reason).find(Boolean);
  return {
    ...located(vcluster, pod.metadata),
    phase,
    status: pod.metadata?.deletionTimestamp ? 'Terminating' : (reason ?? pod.status?.reason ?? phase),
    ready: `${regular.filter((s) => s.ready).length}/${containers.length}`,
    restarts: regular.reduce((sum, s) => sum + (s.restartCount ?? 0), 0),
    node: pod.spec?.nodeName ?? null,
    ip: pod.status?.podIP ?? null,
    images: imagesOf(containers),
    createdAt: dateOf(pod.metadata?.creationTimestamp),
  };
}

function deploymentView(vcluster: string, d: V1Deployment): DeploymentView {
  const revision = d.metadata?.annotations?.['deployment.kubernetes.io/revision'];
  return {
    ...located(vcluster, d.metadata),
    replicas: d.spec?.replicas ?? 1,
    ready: d.status?.readyReplicas ?? 0,
    updated: d.status?.updatedReplicas ?? 0,
    available: d.status?.availableReplicas ?? 0,
    images: imagesOf(d.spec?.template?.spec?.containers),
    revision: revision && /^\d+$/.test(revision) ? Number(revision) : null,
    createdAt: dateOf(d.metadata?.creationTimestamp),
  };
}

function serviceView(vcluster: string, s: V1Service): ServiceView {
  return {
    ...located(vcluster, s.metadata),
    type: s.spec?.type ?? 'ClusterIP',
    clusterIp: s.spec?.clusterIP ?? null,
    externalIps: [...(s.spec?.externalIPs ?? []), ...loadBalancerAddresses(s.status?.loadBalancer?.ingress)],
    ports: (s.spec?.ports ?? []).map((p) => ({
      name: p.name ?? null,
      port: p.port,
      targetPort: p.targetPort === undefined ? null : String(p.targetPort),
      protocol: p.protocol ?? 'TCP',
      nodePort: p.nodePort ?? null,
    })),
    createdAt: dateOf(s.metadata?.creationTimestamp),
  };
}

function ingressView(vcluster: string, i: V1Ingress): IngressView {
  const rules = i.spec?.rules ?? [];
  const backend = (b: { service?: { name: string; port?: { name?: string; number?: number } } } | undefined) => ({
    service: b?.service?.name ?? null,
    port: b?.service?.port?.number !== undefined ? String(b.service.port.number) : (b?.service?.port?.name ?? null),
  });
  return {
    ...located(vcluster, i.metadata),
    className: i.spec?.ingressClassName ?? i.metadata?.annotations?.['kubernetes.io/ingress.class'] ?? null,
    hosts: [...new Set(rules.map((r) => r.host).filter((h): h is string => Boolean(h)))],
    tls: (i.spec?.tls ?? []).map((t) => ({ hosts: t.hosts ?? [], secretName: t.secretName ?? null })),
    rules: [
      ...(i.spec?.defaultBackend ? [{ host: null, path: '/', ...backend(i.spec.defaultBackend) }] : []),
      ...rules.flatMap((r) => (r.http?.paths ?? []).map((p) => ({ host: r.host ?? null, path: p.path ?? '/', ...backend(p.backend) }))),
    ],
    addresses: loadBalancerAddresses(i.status?.loadBalancer?.ingress),
    createdAt: dateOf(i.metadata?.creationTimestamp),
  };
}

function persistentVolumeClaimView(vcluster: string, c: V1PersistentVolumeClaim): PersistentVolumeClaimView {
  return {
    ...located(vcluster, c.metadata),
    phase: c.status?.phase ?? 'Pending',
    capacity: c.status?.capacity?.storage ?? null,
    requested: c.spec?.resources?.requests?.storage ?? null,
    storageClass: c.spec?.storageClassName ?? null,
    accessModes: c.status?.accessModes ?? c.spec?.accessModes ?? [],
    volume: c.spec?.volumeName ?? null,
    createdAt: dateOf(c.metadata?.creationTimestamp),
  };
}

function jobView(vcluster: string, j: V1Job): JobView {
  const holds = (type: string) => (j.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
  return {
    ...located(vcluster, j.metadata),
    status: holds('Complete') ? 'Complete' : holds('Failed') ? 'Failed' : j.spec?.suspend ? 'Suspended' : 'Running',
    completions: j.spec?.completions ?? null,
    parallelism: j.spec?.parallelism ?? null,
    succeeded: j.status?.succeeded ?? 0,
    failed: j.status?.failed ?? 0,
    active: j.status?.active ?? 0,
    images: imagesOf(j.spec?.template?.spec?.containers),
    startedAt: dateOf(j.status?.startTime),
    completedAt: dateOf(j.status?.completionTime),
    createdAt: dateOf(j.metadata?.creationTimestamp),
  };
}

function cronJobView(vcluster: string, c: V1CronJob): CronJobView {
  return {
    ...located(vcluster, c.metadata),
    schedule: c.spec?.schedule ?? '',
    timeZone: c.spec?.timeZone ?? null,
    suspend: c.spec?.suspend ?? false,
    active: c.status?.active?.length ?? 0,
    lastSchedule: dateOf(c.status?.lastScheduleTime),
    lastSuccessfulTime: dateOf(c.status?.lastSuccessfulTime),
    images: imagesOf(c.spec?.jobTemplate?.spec?.template?.spec?.containers),
    createdAt: dateOf(c.metadata?.creationTimestamp),
  };
}

/** The summary of an event in the views (also an app's events). */
export function eventView(vcluster: string, e: CoreV1Event): EventView {
  const created = dateOf(e.metadata?.creationTimestamp);
  return {
    ...located(vcluster, e.metadata),
    type: e.type ?? 'Normal',
    reason: e.reason ?? null,
    message: e.message ?? null,
    involvedObject: { kind: e.involvedObject?.kind ?? null, name: e.involvedObject?.name ?? null, namespace: e.involvedObject?.namespace ?? null },
    count: e.count ?? e.series?.count ?? 1,
    source: e.source?.component ?? e.reportingComponent ?? null,
    firstTimestamp: dateOf(e.firstTimestamp) ?? dateOf(e.eventTime) ?? created,
    lastTimestamp: dateOf(e.lastTimestamp) ?? dateOf(e.series?.lastObservedTime) ?? dateOf(e.eventTime) ?? created,
  };
}

/** How one view reads its objects from one virtual cluster (all namespaces, or one) and summarises each. */
interface ViewSource<V extends Located> {
  list(clients: KubeClients, vcluster: string, namespace: string | undefined): Promise<V[]>;
}

function source<K, V extends Located>(
  all: (clients: KubeClients) => Promise<{ items: K[] }>,
  inNamespace: (clients: KubeClients, namespace: string) => Promise<{ items: K[] }>,
  summarise: (vcluster: string, item: K) => V,
): ViewSource<V> {
  return {
    async list(clients, vcluster, namespace) {
      // Listing in a namespace that does not exist is an empty list, as on a real API server.
      const list = namespace === undefined ? await all(clients) : ((await orUndefined(inNamespace(clients, namespace))) ?? { items: [] });
      return list.items.map((item) => summarise(vcluster, item));
    },
  };
}

/** What each CloudSpace-wide view lists, by the name it has in the API. */
export interface Views {
  pods: PodView;
  events: EventView;
  deployments: DeploymentView;
  services: ServiceView;
  ingresses: IngressView;
  pvcs: PersistentVolumeClaimView;
  jobs: JobView;
  cronjobs: CronJobView;
}

export type ViewName = keyof Views;

const VIEWS: { [N in ViewName]: ViewSource<Views[N]> } = {
  pods: source((c) => c.core.listPodForAllNamespaces(), (c, namespace) => c.core.listNamespacedPod({ namespace }), podView),
  events: source((c) => c.core.listEventForAllNamespaces(), (c, namespace) => c.core.listNamespacedEvent({ namespace }), eventView),
  deployments: source((c) => c.apps.listDeploymentForAllNamespaces(), (c, namespace) => c.apps.listNamespacedDeployment({ namespace }), deploymentView),
  services: source((c) => c.core.listServiceForAllNamespaces(), (c, namespace) => c.core.listNamespacedService({ namespace }), serviceView),
  ingresses: source((c) => c.networking.listIngressForAllNamespaces(), (c, namespace) => c.networking.listNamespacedIngress({ namespace }), ingressView),
  pvcs: source((c) => c.core.listPersistentVolumeClaimForAllNamespaces(), (c, namespace) => c.core.listNamespacedPersistentVolumeClaim({ namespace }), persistentVolumeClaimView),
  jobs: source((c) => c.batch.listJobForAllNamespaces(), (c, namespace) => c.batch.listNamespacedJob({ namespace }), jobView),
  cronjobs: source((c) => c.batch.listCronJobForAllNamespaces(), (c, namespace) => c.batch.listNamespacedCronJob({ namespace }), cronJobView),
};

/** Code-unit order, the same order the cursor's comparisons use (localeCompare would differ). */
function compareKeys(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i]! < b[i]!) return -1;
    if (a[i]! > b[i]!) return 1;
  }
  return 0;
}

/**
 * One page of a list held in memory, sorted by `key` (a tuple of `keyLength` strings): the
 * cursor is the key of the last item returned (opaque, and bound to `list`), so a page
 * continues after it even when items were added or removed in between.
 */
export function pageInMemory<T>(
  items: readonly T[],
  list: string,
  key: (item: T) => string[],
  keyLength: number,
  args: { limit?: number | null; cursor?: string | null },
): PageOfRows<T> {
  const limit = pageLimit(args.limit);
  const after = args.cursor ? (decodeCursor(list, args.cursor, Array.from({ length: keyLength }, () => 'string' as const)) as string[]) : undefined;
  const sorted = [...items].sort((a, b) => compareKeys(key(a), key(b)));
  const rest = after ? sorted.filter((item) => compareKeys(key(item), after) > 0) : sorted;
  const data = rest.slice(0, limit);
  const last = data[data.length - 1];
  return { data, total: sorted.length, nextCursor: rest.length > limit && last ? encodeCursor(list, key(last)) : null };
}

export interface ViewArgs {
  cloudSpaceId: string;
  /** Only this virtual cluster of the CloudSpace. */
  vcluster?: string | null;
  /** Only this namespace (inside each virtual cluster). */
  namespace?: string | null;
  limit?: number | null;
  cursor?: string | null;
}

/** Lines a log read answers when `tail` is not given, and the most it may ask for. */
export const DEFAULT_LOG_TAIL = 100;
export const MAX_LOG_TAIL = 10_000;

export interface PodLogArgs {
  cloudSpaceId: string;
  podName: string;
  /** Default: the CloudSpace's default virtual cluster. */
  vcluster?: string | null;
  /** Default: `default`. */
  namespace?: string | null;
  /** Default: the pod's `kubectl.kubernetes.io/default-container`, else its first container. */
  container?: string | null;
  tail?: number | null;
  sinceSeconds?: number | null;
  timestamps?: boolean | null;
}

export interface PodLogs {
  vcluster: string;
  namespace: string;
  pod: string;
  container: string;
  lines: string[];
}

interface LogTarget {
  space: CloudSpace;
  clients: VirtualClusterClients;
  vcluster: string;
  namespace: string;
  pod: string;
  container: string;
  tail: number;
  sinceSeconds: number | undefined;
  timestamps: boolean;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function checkInteger(value: number | null | undefined, field: string, min: number, max: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) throw new AppError(ErrorCodes.validationFailed, `${field} must be an integer from ${min} to ${max}`);
  return value;
}

/** The message of a Kubernetes Status carried by a failed call, when there is one. */
function statusMessage(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: unknown } | undefined;
    if (typeof status?.message === 'string') return status.message;
  } catch {
    // not a Status
  }
  return `the API server answered ${kubeStatus(error)}`;
}

/**
 * CloudSpace-wide views and pod logs. Everything is read from the CloudSpace's virtual clusters
 * (never the host cluster, where the CloudSpace is only a namespace holding them), through the
 * clients the orchestrator caches per virtual cluster. The CloudSpace itself is looked up
 * through {@link CloudSpaceService}, so another tenant's is not found.
 */
export class CloudSpaceViewsService {
  private readonly spaces: CloudSpaceService;

  constructor(
    em: EntityManager,
    identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {
    this.spaces = new CloudSpaceService(em, identity, runtime);
  }

  /**
   * The CloudSpace (404 for another tenant's; 409 unless Ready), the clients of its virtual
   * clusters, and the virtual clusters to read: the one named (404 when it is not the
   * CloudSpace's, 409 while it is not ready), else the default one or every ready one.
   */
  private async scope(cloudSpaceId: string, wanted: string | undefined, orDefault = false): Promise<{ space: CloudSpace; clients: VirtualClusterClients; vclusters: string[] }> {
    const space = await this.spaces.get(cloudSpaceId);
    const vcluster = wanted ?? (orDefault ? space.defaultVcluster : undefined);
    const all = await this.spaces.listVirtualClusters(space.id);
    const clients = requireOrchestrator(this.runtime).virtualClusters(await this.spaces.clusterOf(space));
    if (vcluster === undefined) return { space, clients, vclusters: all.filter((v) => v.ready).map((v) => v.name) };
    const found = all.find((v) => v.name === vcluster);
    if (!found) throw new AppError(ErrorCodes.notFound, `virtual cluster ${vcluster} not found`);
    if (!found.ready) throw new AppError(ErrorCodes.conflict, `virtual cluster ${vcluster} is ${found.phase}, not ready yet`);
    return { space, clients, vclusters: [found.name] };
  }

  /** Runs `fn` on a virtual cluster; failing to reach it is 503 naming it. */
  private async onVirtualCluster<T>(space: CloudSpace, clients: VirtualClusterClients, vcluster: string, fn: (clients: KubeClients) => Promise<T>): Promise<T> {
    try {
      return await clients.with(space.namespace, vcluster, fn);
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw clusterUnavailable(`virtual cluster ${vcluster} of CloudSpace ${space.name}`, error);
    }
  }

  /** One page of a view over the CloudSpace's virtual clusters, sorted by virtual cluster, namespace and name. */
  async view<N extends ViewName>(name: N, args: ViewArgs): Promise<PageOfRows<Views[N]>> {
    const vcluster = args.vcluster ? checkDnsLabel(args.vcluster, 'vcluster') : undefined;
    const namespace = args.namespace ? checkDnsLabel(args.namespace, 'namespace') : undefined;
    const { space, clients, vclusters } = await this.scope(args.cloudSpaceId, vcluster);
    const source: ViewSource<Views[N]> = VIEWS[name];
    const items = await Promise.all(vclusters.map((vc) => this.onVirtualCluster(space, clients, vc, (c) => source.list(c, vc, namespace))));
    // The cursor is bound to the view and the CloudSpace.
    return pageInMemory(items.flat(), `cloudspace-${name}:${space.id}`, (item) => [item.vcluster, item.namespace, item.name], 3, args);
  }

  /** Validates a log request and finds its pod and container; every failure is answered before any log is read. */
  private async logTarget(args: PodLogArgs): Promise<LogTarget> {
    const pod = (args.podName ?? '').trim();
    if (!DNS_SUBDOMAIN.test(pod)) throw new AppError(ErrorCodes.validationFailed, 'pod name must be a DNS subdomain: lower-case letters, digits, "-" and ".", at most 253 characters');
    const vclusterArg = args.vcluster ? checkDnsLabel(args.vcluster, 'vcluster') : undefined;
    const namespace = args.namespace ? checkDnsLabel(args.namespace, 'namespace') : 'default';
    const wantedContainer = args.container ? checkDnsLabel(args.container, 'container') : undefined;
    const tail = checkInteger(args.tail, 'tail', 0, MAX_LOG_TAIL) ?? DEFAULT_LOG_TAIL;
    const sinceSeconds = checkInteger(args.sinceSeconds, 'since_seconds', 1, 10 * 365 * 24 * 3600);
    const { space, clients, vclusters } = await this.scope(args.cloudSpaceId, vclusterArg, true);
    const vcluster = vclusters[0]!;
    const found = await this.onVirtualCluster(space, clients, vcluster, (c) => orUndefined(c.core.readNamespacedPod({ name: pod, namespace })));
    if (!found) throw new AppError(ErrorCodes.notFound, `pod ${pod} not found in namespace ${namespace} of virtual cluster ${vcluster}`);
    const names = (found.spec?.containers ?? []).map((c) => c.name);
    const container = wantedContainer ?? found.metadata?.annotations?.['kubectl.kubernetes.io/default-container'] ?? names[0];
    if (!container || !names.includes(container)) {
      throw new AppError(ErrorCodes.validationFailed, `container ${container ?? ''} is not in pod ${pod}; choose one of: ${names.join(', ')}`);
    }
    const status = found.status?.containerStatuses?.find((s) => s.name === container);
    const waiting = status?.state?.waiting?.reason;
    // As the API server: a container that never started has no log yet (a crash-looping one has).
    if (!status || (waiting && waiting !== 'CrashLoopBackOff' && !status.restartCount)) {
      throw new AppError(ErrorCodes.conflict, `container ${container} of pod ${pod} is waiting to start (${waiting ?? 'ContainerCreating'}); it has no log yet`);
    }
    return { space, clients, vcluster, namespace, pod, container, tail, sinceSeconds, timestamps: args.timestamps === true };
  }

  /** A failed log read: the pod went away (404), the API server refused the request (409 with its reason), or the cluster is unreachable (503). */
  private logFailure(target: LogTarget, error: unknown): AppError {
    if (error instanceof AppError) return error;
    if (isNotFound(error)) return new AppError(ErrorCodes.notFound, `pod ${target.pod} not found in namespace ${target.namespace} of virtual cluster ${target.vcluster}`);
    if (kubeStatus(error) === 400) return new AppError(ErrorCodes.conflict, `the log of pod ${target.pod} cannot be read now: ${statusMessage(error)}`.slice(0, 300));
    return clusterUnavailable(`virtual cluster ${target.vcluster} of CloudSpace ${target.space.name}`, error);
  }

  /** The last `tail` lines (default 100) of a container's log. */
  async podLogs(args: PodLogArgs): Promise<PodLogs> {
    const target = await this.logTarget(args);
    let text: string;
    try {
      text = await target.clients.with(target.space.namespace, target.vcluster, (c) =>
        c.core.readNamespacedPodLog({
          name: target.pod,
          namespace: target.namespace,
          container: target.container,
          tailLines: target.tail,
          ...(target.sinceSeconds ? { sinceSeconds: target.sinceSeconds } : {}),
          timestamps: target.timestamps,
        }),
      );
    } catch (error) {
      throw this.logFailure(target, error);
    }
    const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
    return { vcluster: target.vcluster, namespace: target.namespace, pod: target.pod, container: target.container, lines };
  }

  /**
   * Follows a container's log: the last `tail` lines, then each new line as the cluster writes
   * it, until the pod goes or the caller destroys the stream, which closes the request to the
   * cluster. Everything that can fail before the first byte fails here, as an AppError.
   */
  async followPodLogs(args: PodLogArgs): Promise<Readable> {
    const target = await this.logTarget(args);
    const stream = new PassThrough();
    let controller: AbortController | undefined;
    let closed = false;
    stream.once('close', () => {
      closed = true;
      controller?.abort();
    });
    // client-node's Log pipes the response body into `stream` but listens to none of its
    // errors, and aborting makes that body emit one: without a listener it would crash the
    // process. The 'pipe' event hands us the body.
    stream.once('pipe', (body: Readable) => {
      body.on('error', (error: Error) => {
        if (!closed) stream.destroy(error);
      });
    });
    try {
      controller = await target.clients.with(target.space.namespace, target.vcluster, (c) =>
        new Log(c.kubeConfig).log(target.namespace, target.pod, target.container, stream, {
          follow: true,
          // The Log class leaves out a tail of 0; when following, it means "from now on".
          ...(target.tail === 0 ? { sinceTime: new Date().toISOString() } : { tailLines: target.tail, ...(target.sinceSeconds ? { sinceSeconds: target.sinceSeconds } : {}) }),
          timestamps: target.timestamps,
        }),
      );
    } catch (error) {
      stream.destroy();
      throw this.logFailure(target, error);
    }
    if (closed) controller.abort();
    return stream;
  }
}
