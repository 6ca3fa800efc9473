/**
 * The "world" of `npm run bench -- apps`, in a child process of its own: kube-sim (its simulated
 * delays at zero), the bare fleet repository, the local applier (the Flux stand-in) and the local
 * HTTPS ingress — what the e2e test of apps (tests/e2e/apps.test.ts) starts in the test process.
 *
 * Why a child process: the benchmark process runs the edge, and kube-sim, the applier and the
 * ingress do real work for every app created (server-side applies, Git, listing Ingresses); in
 * the edge's event loop they would be measured as the edge's latency. In production they are
 * other machines; here they at least get an event loop of their own.
 *
 * It also takes note, from kube-sim's stores (in this process, so without polling), of when each
 * tracked app reaches each step: its PlatformApp resource applied by the relay, the commit
 * recorded on it by the app controller, its Deployment / Ingress / Pod created by the applier
 * and kube-sim, the Pod Ready, the Flux Kustomization updated after the pass that applied it.
 *
 * Started with fork() and one JSON argument ({@link WorldOptions}); talks over IPC
 * ({@link WorldRequest} → {@link WorldReply}); stops on `stop` or when the parent goes away.
 * Not a benchmark: run.ts does not list it. Import only its types elsewhere (`import type`):
 * importing the module starts a world.
 */
import { writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { startKubeSim, type KubeSim } from '../kube-sim/index.js';
import type { Change } from '../kube-sim/store.js';
import { createLogger } from '../kernel/logger.js';
import { createLocalBareRepo } from '../subgraphs/platform/gitops/fleet-repo.js';
import { git } from '../subgraphs/platform/gitops/git.js';
import { startLocalApplier, type LocalApplier } from '../subgraphs/platform/gitops/local-applier.js';
import { startLocalIngress, type LocalIngress } from '../subgraphs/platform/gitops/local-ingress.js';
import { virtualClustersFromHost } from '../subgraphs/platform/gitops/virtual-clusters.js';

export interface WorldOptions {
  /** A temporary directory of the parent's: the repository, the working copies, the kubeconfig and the CA go there. */
  dir: string;
  podReadyDelayMs: number;
  clusterPhaseDelayMs: number;
  applierIntervalMs: number;
  /** Drift correction of unchanged folders (the applier's resyncMs). */
  applierResyncMs: number;
  ingressCacheMs: number;
}

export interface WorldReady {
  type: 'ready';
  kubeconfigFile: string;
  repoUrl: string;
  ingressAddress: string;
  caFile: string;
  kubeSimUrl: string;
}

/** The steps of one app noted here, as epoch milliseconds (performance.timeOrigin + now()). */
export type Milestone = 'resource' | 'committed' | 'deployment' | 'ingress' | 'pod' | 'podReady' | 'synced';

export interface WorldStatus {
  /** The fleet branch head in the bare repository. */
  head: string;
  applier: { sha: string; startedAt: string; finishedAt: string; clusters: { vcluster: string; outcome: string; applied: number; error?: string }[] } | null;
  /** PlatformApps on the host, and how many the app controller has not committed yet (status.observedGeneration behind spec.generation). */
  platformApps: number;
  uncommitted: number;
  vclusters: { namespace: string; name: string; deployments: number; ingresses: number; pods: number; readyPods: number }[];
  /** Passes of the applier that applied objects (or only moved the revision), and their durations, since the last `status`. */
  passes: { at: number; durationMs: number; applied: number }[];
}

export type WorldRequest =
  | { id: number; type: 'track'; namespace: string; vcluster: string; name: string }
  | { id: number; type: 'times'; namespace: string; name: string }
  | { id: number; type: 'status' }
  /** Moves the bare fleet repository away: every fetch and push fails from then on. */
  | { id: number; type: 'remove-repo' }
  | { id: number; type: 'stop' };

export type WorldReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

const now = () => performance.timeOrigin + performance.now();

const PLATFORM_APPS = 'platformapps.platform.cloudops.dev';
const KUSTOMIZATIONS = 'kustomizations.kustomize.toolkit.fluxcd.io';
const APP_LABEL = 'app.kubernetes.io/name';

interface Tracked {
  vcluster: string;
  times: Partial<Record<Milestone, number>>;
  commit?: string;
}

const isReady = (object: Change['object']): boolean =>
  Array.isArray(object.status?.conditions) && (object.status.conditions as { type?: string; status?: string }[]).some((c) => c.type === 'Ready' && c.status === 'True');

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '') as WorldOptions;
  const logger = createLogger({ service: 'bench-apps-world', level: 'silent' });
  const stops: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const stop of stops.splice(0).reverse()) await stop().catch((error: unknown) => process.stderr.write(`apps-world: stopping: ${String(error)}\n`));
    })());
  process.on('disconnect', () => {
    void stopAll().finally(() => process.exit(0));
  });

  const sim: KubeSim = await startKubeSim({ podReadyDelayMs: options.podReadyDelayMs, clusterPhaseDelayMs: options.clusterPhaseDelayMs });
  stops.push(() => sim.stop());
  const kubeconfigFile = join(options.dir, 'kubeconfig');
  writeFileSync(kubeconfigFile, sim.kubeconfig);
  const repoDir = join(options.dir, 'fleet.git');
  const repoUrl = await createLocalBareRepo(repoDir, 'main');

  // What the tracked apps went through, keyed `<namespace>/<app>`.
  const tracked = new Map<string, Tracked>();
  const mark = (entry: Tracked | undefined, step: Milestone) => {
    if (entry && entry.times[step] === undefined) entry.times[step] = now();
  };
  sim.host.store.subscribe((change) => {
    if (change.storageKey !== PLATFORM_APPS || change.type === 'DELETED') return;
    const entry = tracked.get(`${change.namespace}/${change.object.metadata.name}`);
    if (!entry) return;
    mark(entry, 'resource');
    const commit = change.object.status?.commit;
    if (typeof commit === 'string' && commit && entry.times.committed === undefined) {
      entry.commit = commit;
      mark(entry, 'committed');
    }
  });
  const watchedVclusters = new Set<string>();
  const watchVcluster = (namespace: string, vcluster: string): boolean => {
    const key = `${namespace}/${vcluster}`;
    if (watchedVclusters.has(key)) return true;
    const handle = sim.virtualCluster(namespace, vcluster);
    if (!handle) return false;
    watchedVclusters.add(key);
    handle.cluster.store.subscribe((change) => {
      if (change.type === 'DELETED') return;
      const name = change.object.metadata.name;
      switch (change.storageKey) {
        case 'deployments.apps':
          if (change.type === 'ADDED') mark(tracked.get(`${namespace}/${name}`), 'deployment');
          return;
        case 'ingresses.networking.k8s.io':
          if (change.type === 'ADDED') mark(tracked.get(`${namespace}/${name}`), 'ingress');
          return;
        case 'pods': {
          const app = change.object.metadata.labels?.[APP_LABEL];
          const entry = app === undefined ? undefined : tracked.get(`${namespace}/${app}`);
          mark(entry, 'pod');
          if (isReady(change.object)) mark(entry, 'podReady');
          return;
        }
        case KUSTOMIZATIONS:
          // The applier writes the Kustomization's status at the end of each pass: every app whose
          // Deployment this pass created is now in lastAppliedRevision.
          if (change.object.status?.lastAppliedRevision === undefined) return;
          for (const entry of tracked.values()) if (entry.vcluster === key && entry.times.deployment !== undefined) mark(entry, 'synced');
          return;
        default:
      }
    });
    return true;
  };

  const applier: LocalApplier = await startLocalApplier({
    repoUrl,
    branch: 'main',
    workdir: join(options.dir, 'applier'),
    hostKubeConfig: sim.kubeConfig(),
    intervalMs: options.applierIntervalMs,
    resyncMs: options.applierResyncMs,
    logger,
  });
  stops.push(() => applier.stop());
  const ingress: LocalIngress = await startLocalIngress({ virtualClusters: virtualClustersFromHost(sim.kubeConfig()), logger, cacheMs: options.ingressCacheMs });
  stops.push(() => ingress.stop());
  const caFile = join(options.dir, 'ingress-ca.pem');
  writeFileSync(caFile, ingress.caPem);

  // Passes that did something, from the applier's lastPass (polled: the applier has no hook).
  let passes: WorldStatus['passes'] = [];
  let lastSeen: string | undefined;
  const passTimer = setInterval(() => {
    const pass = applier.lastPass;
    if (!pass || pass.finishedAt === lastSeen) return;
    lastSeen = pass.finishedAt;
    const applied = pass.clusters.reduce((sum, c) => sum + c.applied, 0);
    if (pass.clusters.some((c) => c.outcome === 'applied' || c.outcome === 'status')) {
      passes.push({ at: Date.parse(pass.finishedAt), durationMs: Date.parse(pass.finishedAt) - Date.parse(pass.startedAt), applied });
      if (passes.length > 10_000) passes = passes.slice(-5000);
    }
  }, 5);
  passTimer.unref();
  stops.push(async () => clearInterval(passTimer));

  const status = async (): Promise<WorldStatus> => {
    const head = (await git(repoDir, ['rev-parse', 'refs/heads/main'])).stdout.trim();
    const pass = applier.lastPass;
    const apps = sim.host.store.list(PLATFORM_APPS);
    const uncommitted = apps.filter((a) => a.status?.observedGeneration !== a.spec?.generation).length;
    const vclusters = sim.virtualClusters().map((handle) => {
      const store = handle.cluster.store;
      const pods = store.list('pods', 'default');
      return {
        namespace: handle.namespace,
        name: handle.name,
        deployments: store.count('deployments.apps', 'default'),
        ingresses: store.count('ingresses.networking.k8s.io', 'default'),
        pods: pods.length,
        readyPods: pods.filter(isReady).length,
      };
    });
    const done = passes;
    passes = [];
    return {
      head,
      applier: pass
        ? { sha: pass.sha, startedAt: pass.startedAt, finishedAt: pass.finishedAt, clusters: pass.clusters.map((c) => ({ vcluster: `${c.namespace}/${c.vcluster}`, outcome: c.outcome, applied: c.applied, ...(c.error ? { error: c.error } : {}) })) }
        : null,
      platformApps: apps.length,
      uncommitted,
      vclusters,
      passes: done,
    };
  };

  const handle = async (request: WorldRequest): Promise<unknown> => {
    switch (request.type) {
      case 'track': {
        if (!watchVcluster(request.namespace, request.vcluster)) throw new Error(`kube-sim has no virtual cluster ${request.namespace}/${request.vcluster}`);
        tracked.set(`${request.namespace}/${request.name}`, { vcluster: `${request.namespace}/${request.vcluster}`, times: {} });
        return null;
      }
      case 'times': {
        const entry = tracked.get(`${request.namespace}/${request.name}`);
        if (!entry) throw new Error(`${request.namespace}/${request.name} is not tracked`);
        return { times: entry.times, commit: entry.commit ?? null };
      }
      case 'status':
        return status();
      case 'remove-repo':
        await rename(repoDir, `${repoDir}.removed`);
        return null;
      case 'stop':
        await stopAll();
        return null;
    }
  };
  process.on('message', (message: WorldRequest) => {
    handle(message).then(
      (value) => process.send?.({ id: message.id, ok: true, value } satisfies WorldReply),
      (error: unknown) => process.send?.({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) } satisfies WorldReply),
    );
  });
  process.send?.({ type: 'ready', kubeconfigFile, repoUrl, ingressAddress: `127.0.0.1:${ingress.port}`, caFile, kubeSimUrl: sim.url } satisfies WorldReady);
}

main().catch((error: unknown) => {
  process.stderr.write(`apps-world: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
