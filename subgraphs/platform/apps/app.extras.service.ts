import type { V1Deployment, V1Pod, V1Probe, V1ReplicaSet } from '@kubernetes/client-node';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { stringify } from 'yaml';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import type { PageOfRows } from '../../../kernel/pagination.js';
import { CloudSpaceViewsService, DEFAULT_LOG_TAIL, eventView, MAX_LOG_TAIL, pageInMemory, podView, type EventView, type PodLogs, type PodView } from '../cloudspaces/views.service.js';
import { checkDnsLabel } from '../clusters/cluster.service.js';
import { isNotFound, orUndefined } from '../orchestrator/kube.js';
import type { PlatformRuntime } from '../runtime.js';
import { App, AppRevisionNote, type HealthCheck } from './app.entity.js';
import { APP_NAMESPACE, LABELS } from './app.render.js';
import { revisionNumber, revisionOf, type Revision } from './app.revisions.js';
import { AppService } from './app.service.js';

/** Tags are short labels; a revision has at most {@link MAX_TAGS}. */
export const TAG = /^[A-Za-z0-9._-]{1,40}$/;
export const MAX_TAGS = 20;
export const MAX_NOTES = 4000;
/** How a secret value appears in a comparison: never the value. */
export const SECRET_MASK = '(secret)';

const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export type ExportFormat = 'yaml' | 'json';

/** A revision with what the export and the comparison need beyond the list's fields. */
export interface RevisionDetail extends Revision {
  /** Replicas the Deployment wanted while this revision was its current one (`deployment.kubernetes.io/desired-replicas`). */
  desiredReplicas: number;
  healthCheck: HealthCheck | null;
}

/** A revision as the API answers it: the list's fields plus its tags and notes. */
export interface RevisionWithNotes extends Revision {
  appId: string;
  tags: string[];
  notes: string;
}

export interface Difference {
  field: string;
  /** added, removed or changed. */
  change: 'added' | 'removed' | 'changed';
  from: string | null;
  to: string | null;
}

export interface Comparison {
  from: RevisionDetail;
  to: RevisionDetail;
  differences: Difference[];
}

export interface RevisionExport {
  format: ExportFormat;
  filename: string;
  contentType: string;
  content: string;
}

export interface ContainerUsage {
  name: string;
  cpuMillicores: number;
  memoryBytes: number;
}

export interface PodUsage {
  pod: string;
  cpuMillicores: number;
  memoryBytes: number;
  cpu: string;
  memory: string;
  containers: ContainerUsage[];
  timestamp: Date | null;
  window: string | null;
}

export interface AppUsage {
  vcluster: string;
  namespace: string;
  pods: PodUsage[];
  totals: { pods: number; cpuMillicores: number; memoryBytes: number; cpu: string; memory: string };
}

export interface AppLogArgs {
  /** One of the app's pods; default: its newest ready pod (else its newest pod). */
  pod?: string | null;
  container?: string | null;
  tail?: number | null;
  sinceSeconds?: number | null;
  timestamps?: boolean | null;
}

const fail = (message: string): never => {
  throw new AppError(ErrorCodes.validationFailed, message);
};

function checkInteger(value: number | null | undefined, field: string, min: number, max: number): void {
  if (value === null || value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) fail(`${field} must be an integer from ${min} to ${max}`);
}

/** A revision named by its number or its id (the ReplicaSet's name). */
type RevisionRef = { revision: number } | { id: string };

function revisionRef(value: string | null | undefined, field: string): RevisionRef {
  const text = (value ?? '').trim();
  if (text === '') fail(`${field} is required: a revision number or a deployment id`);
  if (/^\d{1,9}$/.test(text)) return { revision: Number(text) };
  return { id: text };
}

const describeRef = (ref: RevisionRef) => ('revision' in ref ? `revision ${ref.revision}` : `deployment ${ref.id}`);

/** Tags as given: each a short label, no more than {@link MAX_TAGS}. */
export function checkTags(tags: readonly string[] | null | undefined): string[] {
  const list = tags ?? [];
  if (list.length === 0) fail('tags must hold at least one tag');
  if (list.length > MAX_TAGS) fail(`tags takes at most ${MAX_TAGS} tags`);
  list.forEach((tag, i) => {
    if (typeof tag !== 'string' || !TAG.test(tag)) fail(`tags[${i}] must be 1 to 40 letters, digits, ".", "_" or "-"`);
  });
  return [...new Set(list)];
}

export function checkNotes(notes: string | null | undefined): string {
  if (typeof notes !== 'string') return fail('notes must be a string (empty to clear them)');
  if (notes.length > MAX_NOTES) fail(`notes must be at most ${MAX_NOTES} characters`);
  return notes;
}

function healthCheckOf(probe: V1Probe | undefined): HealthCheck | null {
  const get = probe?.httpGet;
  if (!get?.path) return null;
  const port = typeof get.port === 'number' ? get.port : Number(get.port);
  return { path: get.path, port: Number.isInteger(port) ? port : 0, initialDelaySecs: probe?.initialDelaySeconds ?? 0, periodSecs: probe?.periodSeconds ?? 10 };
}

function detailOf(rs: V1ReplicaSet, current: number | null): RevisionDetail | undefined {
  const revision = revisionOf(rs, current);
  if (!revision) return undefined;
  const container = rs.spec?.template?.spec?.containers?.[0];
  const desired = Number(rs.metadata?.annotations?.[DESIRED_REPLICAS_ANNOTATION]);
  return {
    ...revision,
    desiredReplicas: Number.isInteger(desired) ? desired : (rs.spec?.replicas ?? 0),
    healthCheck: healthCheckOf(container?.readinessProbe ?? container?.livenessProbe),
  };
}

/** Kubernetes quantities as numbers: cores for CPU, bytes for memory. */
export function quantityValue(text: string): number {
  const match = /^([+-]?\d+(?:\.\d+)?)(?:(e[+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$/.exec(text.trim());
  if (!match) return 0;
  const number = Number(match[1]);
  if (match[2]) return number * 10 ** Number(match[2].slice(1));
  const factor: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
  return number * (match[3] ? factor[match[3]]! : 1);
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
/** As `kubectl top` shows them: millicores and mebibytes. */
const cpuText = (millicores: number) => `${Math.round(millicores)}m`;
const memoryText = (bytes: number) => `${Math.round(bytes / 2 ** 20)}Mi`;

/**
 * The app's objects in its virtual cluster: its name and its id, as the rendered pod template
 * labels them (ReplicaSets carry the template's labels), so a workload of the tenant's own that
 * happens to use the same `app.kubernetes.io/name` is not taken for the app's.
 */
const selectorOf = (app: App) => `${LABELS.app}=${app.name},${LABELS.appId}=${app.id}`;

const podCreated = (pod: V1Pod) => (pod.metadata?.creationTimestamp ? new Date(pod.metadata.creationTimestamp).getTime() : 0);
const podReady = (pod: V1Pod) => (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * What the platform adds around an app's revisions and its live state (spec 4.1): one revision
 * with its tags and notes, its configuration as a document, a comparison of two revisions, the
 * app's pods, events, metrics and logs. The app is always read through {@link AppService.get}
 * (another tenant's is not found) and everything live comes from its virtual cluster through
 * {@link AppService.inVirtualCluster} (503 when it cannot be reached).
 */
export class AppExtrasService {
  readonly apps: AppService;

  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
    private readonly runtime: PlatformRuntime,
  ) {
    this.apps = new AppService(em, identity, runtime);
  }

  /** The app's revisions newest first (ReplicaSets carrying its name and id), and whether it has a Deployment at all. */
  private async revisions(app: App): Promise<{ deployed: boolean; revisions: RevisionDetail[] }> {
    return this.apps.inVirtualCluster(app, async (clients) => {
      const [sets, deployment] = await Promise.all([
        clients.apps.listNamespacedReplicaSet({ namespace: APP_NAMESPACE, labelSelector: selectorOf(app) }),
        orUndefined(clients.apps.readNamespacedDeployment({ namespace: APP_NAMESPACE, name: app.name })) as Promise<V1Deployment | undefined>,
      ]);
      const revisions = sets.items
        .map((rs) => detailOf(rs, revisionNumber(deployment)))
        .filter((r): r is RevisionDetail => r !== undefined)
        .sort((a, b) => b.revision - a.revision);
      return { deployed: deployment !== undefined || revisions.length > 0, revisions };
    });
  }

  /** One revision: 409 while the app has never been deployed, 404 when it has no such revision. */
  private async find(app: App, ref: RevisionRef, all?: { deployed: boolean; revisions: RevisionDetail[] }): Promise<RevisionDetail> {
    const { deployed, revisions } = all ?? (await this.revisions(app));
    const found = revisions.find((r) => ('revision' in ref ? r.revision === ref.revision : r.id === ref.id));
    if (found) return found;
    if (!deployed) throw new AppError(ErrorCodes.conflict, `app ${app.name} is not deployed yet: it has no revisions`);
    throw new AppError(ErrorCodes.notFound, `${describeRef(ref)} of app ${app.name} not found`);
  }

  /** Tags and notes of the app's revisions, by revision number. */
  async notesOf(appId: string): Promise<Map<number, AppRevisionNote>> {
    const notes = await this.em.find(AppRevisionNote, { appId });
    return new Map(notes.map((n) => [n.revision, n]));
  }

  private withNotes(app: App, revision: Revision, note: AppRevisionNote | undefined): RevisionWithNotes {
    return { ...revision, appId: app.id, tags: note?.tags ?? [], notes: note?.notes ?? '' };
  }

  /** `GET …/deployments/{deploymentId}`: by id (ReplicaSet name) or revision number, with its tags and notes. */
  async deployment(id: string, deploymentId: string): Promise<RevisionWithNotes> {
    const ref = revisionRef(deploymentId, 'deployment_id');
    const app = await this.apps.get(id);
    const revision = await this.find(app, ref);
    return this.withNotes(app, revision, (await this.notesOf(app.id)).get(revision.revision));
  }

  /** A revision's configuration as a document a user can keep (and apply again with `PUT /apps/{id}` once secret values are filled in). */
  async exportRevision(id: string, deploymentId: string, format: ExportFormat | null | undefined): Promise<RevisionExport> {
    const ref = revisionRef(deploymentId, 'deployment_id');
    const chosen: ExportFormat = format ?? 'yaml';
    if (chosen !== 'yaml' && chosen !== 'json') fail('format must be yaml or json');
    const app = await this.apps.get(id);
    const r = await this.find(app, ref);
    const document = {
      app: app.name,
      app_id: app.id,
      cloudspace_id: app.cloudspaceId,
      vcluster: app.vcluster,
      revision: r.revision,
      deployment_id: r.id,
      created_at: r.createdAt,
      config: {
        source: { type: 'image', image: r.image },
        port: r.port,
        replicas: r.desiredReplicas,
        resources: { cpu_request: r.resources.cpuRequest, memory_request: r.resources.memoryRequest },
        env: r.env.map((e) => ({ name: e.name, value: e.secret ? null : e.value, secret: e.secret })),
        health_check: r.healthCheck ? { path: r.healthCheck.path, port: r.healthCheck.port, initial_delay_secs: r.healthCheck.initialDelaySecs, period_secs: r.healthCheck.periodSecs } : null,
      },
    };
    const filename = `${app.name}-revision-${r.revision}.${chosen}`;
    if (chosen === 'json') return { format: chosen, filename, contentType: 'application/json', content: `${JSON.stringify(document, null, 2)}\n` };
    const header = [
      `# Revision ${r.revision} of app ${app.name} (deployment ${r.id}).`,
      '# Secret values are never exported (value: null): set them before applying this configuration again.',
    ].join('\n');
    return { format: chosen, filename, contentType: 'application/yaml', content: `${header}\n${stringify(document)}` };
  }

  /**
   * Field-by-field differences from one revision to another: image, port, each environment
   * variable (added, removed, changed; a secret's value is never shown, and a change of a secret
   * value alone cannot be seen: every revision reads the same Secret), CPU and memory requests,
   * replicas.
   */
  async compare(id: string, from: string | null | undefined, to: string | null | undefined): Promise<Comparison> {
    if (!from || !to || from.trim() === '' || to.trim() === '') fail('give both from and to: revision numbers or deployment ids');
    const fromRef = revisionRef(from, 'from');
    const toRef = revisionRef(to, 'to');
    const app = await this.apps.get(id);
    const all = await this.revisions(app);
    const a = await this.find(app, fromRef, all);
    const b = await this.find(app, toRef, all);
    return { from: a, to: b, differences: differences(a, b) };
  }

  /**
   * Upserts the note row of one revision of an app and changes it, under a row lock, so two
   * requests adding tags at once both count.
   */
  private async changeNote(app: App, revision: number, change: (note: AppRevisionNote) => void): Promise<AppRevisionNote> {
    return this.em.transactional(async (tx) => {
      await tx.execute(
        `insert into "platform"."app_revision_note" ("id", "tenant_id", "app_id", "revision", "tags", "notes", "updated_at") values (?, ?, ?, ?, '{}', '', now()) on conflict ("app_id", "revision") do nothing`,
        [randomUUID(), app.tenantId, app.id, revision],
      );
      const note = await tx.findOneOrFail(AppRevisionNote, { appId: app.id, revision }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, filters: false });
      change(note);
      note.updatedAt = new Date();
      return note;
    });
  }

  /** `POST …/deployments/{deploymentId}/tags`: adds tags (already there: kept once), at most {@link MAX_TAGS} in all. */
  async addTags(id: string, deploymentId: string, tags: readonly string[]): Promise<RevisionWithNotes> {
    const ref = revisionRef(deploymentId, 'deployment_id');
    const added = checkTags(tags);
    const app = await this.apps.get(id);
    const revision = await this.find(app, ref);
    const note = await this.changeNote(app, revision.revision, (n) => {
      const merged = [...new Set([...n.tags, ...added])];
      if (merged.length > MAX_TAGS) fail(`a revision has at most ${MAX_TAGS} tags (it has ${n.tags.length})`);
      n.tags = merged;
    });
    return this.withNotes(app, revision, note);
  }

  /** `PUT …/deployments/{deploymentId}/notes`: replaces the notes (empty clears them). */
  async setNotes(id: string, deploymentId: string, notes: string): Promise<RevisionWithNotes> {
    const ref = revisionRef(deploymentId, 'deployment_id');
    const text = checkNotes(notes);
    const app = await this.apps.get(id);
    const revision = await this.find(app, ref);
    const note = await this.changeNote(app, revision.revision, (n) => {
      n.notes = text;
    });
    return this.withNotes(app, revision, note);
  }

  private listPods(app: App): Promise<V1Pod[]> {
    return this.apps.inVirtualCluster(app, async (c) => (await c.core.listNamespacedPod({ namespace: APP_NAMESPACE, labelSelector: selectorOf(app) })).items);
  }

  /** The app's pods, summarised as the CloudSpace view does, sorted by name. */
  async pods(id: string, page: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<PodView>> {
    const app = await this.apps.get(id);
    const pods = (await this.listPods(app)).map((p) => podView(app.vcluster, p));
    return pageInMemory(pods, `app-pods:${app.id}`, (p) => [p.name], 1, page);
  }

  /**
   * Events about the app's Deployment, its ReplicaSets (those that still exist) and their pods
   * (also pods already gone: a pod's name is its ReplicaSet's and five characters), oldest
   * first by when they last happened.
   */
  async events(id: string, page: { limit?: number | null; cursor?: string | null }): Promise<PageOfRows<EventView>> {
    const app = await this.apps.get(id);
    const events = await this.apps.inVirtualCluster(app, async (c) => {
      const [sets, pods, list] = await Promise.all([
        c.apps.listNamespacedReplicaSet({ namespace: APP_NAMESPACE, labelSelector: selectorOf(app) }),
        c.core.listNamespacedPod({ namespace: APP_NAMESPACE, labelSelector: selectorOf(app) }),
        c.core.listNamespacedEvent({ namespace: APP_NAMESPACE }),
      ]);
      const replicaSets = new Set(sets.items.map((rs) => rs.metadata?.name ?? '').filter(Boolean));
      const podNames = new Set(pods.items.map((p) => p.metadata?.name ?? '').filter(Boolean));
      const isAppPod = (name: string) => podNames.has(name) || (/-[a-z0-9]{5}$/.test(name) && replicaSets.has(name.slice(0, -6)));
      return list.items.filter((e) => {
        const { kind, name } = e.involvedObject ?? {};
        if (!name) return false;
        if (kind === 'Deployment') return name === app.name;
        if (kind === 'ReplicaSet') return replicaSets.has(name);
        if (kind === 'Pod') return isAppPod(name);
        return false;
      });
    });
    const views = events.map((e) => eventView(app.vcluster, e));
    return pageInMemory(views, `app-events:${app.id}`, (e) => [e.lastTimestamp?.toISOString() ?? '', e.name], 2, page);
  }

  /** CPU and memory use of the app's running pods, from `metrics.k8s.io/v1beta1` PodMetrics. */
  async metrics(id: string): Promise<AppUsage> {
    const app = await this.apps.get(id);
    const items = await this.apps.inVirtualCluster(app, async (c) => {
      try {
        const list = (await c.custom.listNamespacedCustomObject({ group: 'metrics.k8s.io', version: 'v1beta1', namespace: APP_NAMESPACE, plural: 'pods', labelSelector: selectorOf(app) })) as {
          items?: { metadata?: { name?: string }; timestamp?: string; window?: string; containers?: { name?: string; usage?: { cpu?: string; memory?: string } }[] }[];
        };
        return list.items ?? [];
      } catch (error) {
        if (isNotFound(error)) throw new AppError(ErrorCodes.upstreamUnavailable, `virtual cluster ${app.vcluster} serves no metrics API (metrics.k8s.io): is metrics-server installed?`);
        throw error;
      }
    });
    const pods: PodUsage[] = items
      .map((m) => {
        const containers = (m.containers ?? []).map((c) => ({
          name: c.name ?? '',
          cpuMillicores: round(quantityValue(c.usage?.cpu ?? '0') * 1000),
          memoryBytes: Math.round(quantityValue(c.usage?.memory ?? '0')),
        }));
        const cpuMillicores = round(containers.reduce((sum, c) => sum + c.cpuMillicores, 0));
        const memoryBytes = containers.reduce((sum, c) => sum + c.memoryBytes, 0);
        const at = m.timestamp ? new Date(m.timestamp) : null;
        return { pod: m.metadata?.name ?? '', cpuMillicores, memoryBytes, cpu: cpuText(cpuMillicores), memory: memoryText(memoryBytes), containers, timestamp: at && !Number.isNaN(at.getTime()) ? at : null, window: m.window ?? null };
      })
      .sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
    const cpuMillicores = round(pods.reduce((sum, p) => sum + p.cpuMillicores, 0));
    const memoryBytes = pods.reduce((sum, p) => sum + p.memoryBytes, 0);
    return { vcluster: app.vcluster, namespace: APP_NAMESPACE, pods, totals: { pods: pods.length, cpuMillicores, memoryBytes, cpu: cpuText(cpuMillicores), memory: memoryText(memoryBytes) } };
  }

  /** Checks log parameters before anything is read. */
  private checkLogArgs(args: AppLogArgs): void {
    checkInteger(args.tail, 'tail', 0, MAX_LOG_TAIL);
    checkInteger(args.sinceSeconds, 'since_seconds', 1, 10 * 365 * 24 * 3600);
    if (args.container) checkDnsLabel(args.container, 'container');
    if (args.pod && !DNS_SUBDOMAIN.test(args.pod.trim())) fail('pod must be a pod name: lower-case letters, digits, "-" and ".", at most 253 characters');
  }

  /** The pod whose log to read: the one asked for when it is the app's (404 otherwise), else its newest ready pod, else its newest. */
  private async logPod(app: App, wanted: string | null | undefined): Promise<string> {
    const pods = (await this.listPods(app)).filter((p) => p.metadata?.name);
    if (wanted) {
      const name = wanted.trim();
      if (!pods.some((p) => p.metadata!.name === name)) throw new AppError(ErrorCodes.notFound, `pod ${name} is not a pod of app ${app.name}`);
      return name;
    }
    const live = pods.filter((p) => !p.metadata?.deletionTimestamp);
    const newest = (list: V1Pod[]) => [...list].sort((a, b) => podCreated(b) - podCreated(a))[0];
    const chosen = newest(live.filter(podReady)) ?? newest(live) ?? newest(pods);
    if (!chosen) throw new AppError(ErrorCodes.conflict, `app ${app.name} has no pods (not deployed yet, or stopped)`);
    return chosen.metadata!.name!;
  }

  private podLogArgs(app: App, pod: string, args: AppLogArgs) {
    return {
      cloudSpaceId: app.cloudspaceId,
      podName: pod,
      vcluster: app.vcluster,
      namespace: APP_NAMESPACE,
      container: args.container ?? null,
      tail: args.tail ?? DEFAULT_LOG_TAIL,
      sinceSeconds: args.sinceSeconds ?? null,
      timestamps: args.timestamps ?? null,
    };
  }

  private views(): CloudSpaceViewsService {
    return new CloudSpaceViewsService(this.em, this.identity, this.runtime);
  }

  /** The last lines of one of the app's pods (the CloudSpace's pod log read, limited to the app's pods). */
  async logs(id: string, args: AppLogArgs): Promise<PodLogs> {
    this.checkLogArgs(args);
    const app = await this.apps.get(id);
    const pod = await this.logPod(app, args.pod);
    return this.views().podLogs(this.podLogArgs(app, pod, args));
  }

  /** Follows the log of one of the app's pods: a stream that ends when the pod goes or the caller destroys it. */
  async followLogs(id: string, args: AppLogArgs): Promise<{ pod: string; stream: Readable }> {
    this.checkLogArgs(args);
    const app = await this.apps.get(id);
    const pod = await this.logPod(app, args.pod);
    return { pod, stream: await this.views().followPodLogs(this.podLogArgs(app, pod, args)) };
  }
}

/** The differences between two revisions, in a fixed order of fields. */
export function differences(a: RevisionDetail, b: RevisionDetail): Difference[] {
  const out: Difference[] = [];
  const field = (name: string, from: string | null, to: string | null) => {
    if (from === to) return;
    out.push({ field: name, change: from === null ? 'added' : to === null ? 'removed' : 'changed', from, to });
  };
  const text = (v: number | string | null) => (v === null || v === undefined ? null : String(v));
  field('image', a.image, b.image);
  field('port', text(a.port), text(b.port));
  const before = new Map(a.env.map((e) => [e.name, e] as const));
  const after = new Map(b.env.map((e) => [e.name, e] as const));
  const shown = (e: { value: string | null; secret: boolean }) => (e.secret ? SECRET_MASK : (e.value ?? ''));
  for (const name of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const x = before.get(name);
    const y = after.get(name);
    if (x && y && x.secret && y.secret) continue;
    field(`env.${name}`, x ? shown(x) : null, y ? shown(y) : null);
  }
  field('resources.cpu_request', a.resources.cpuRequest, b.resources.cpuRequest);
  field('resources.memory_request', a.resources.memoryRequest, b.resources.memoryRequest);
  field('replicas', text(a.desiredReplicas), text(b.desiredReplicas));
  return out;
}

