/**
 * kube-sim: a local Kubernetes API server double for development and tests — not a cluster.
 * It speaks enough of the real REST API for @kubernetes/client-node (and kubectl for the
 * common verbs) to work against it unchanged, and simulates the controllers the platform
 * relies on. See kube-sim/README.md for what it does and does not do.
 *
 * ```ts
 * const sim = await startKubeSim({ podReadyDelayMs: 0 });
 * const core = sim.kubeConfig().makeApiClient(CoreV1Api);
 * ...
 * await sim.stop();
 * ```
 */
import { KubeConfig } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { SimCluster, type SimClusterOptions, type VirtualClusterProvider } from './cluster.js';
import { buildKubeconfig } from './kubeconfig.js';
import { createKubeSimServer, VCLUSTER_PREFIX, type TlsOptions } from './server.js';
import { restoreCluster, snapshotCluster, SNAPSHOT_VERSION, type KubeSimSnapshot } from './snapshot.js';

export { SimCluster } from './cluster.js';
export { FAIL_ANNOTATION as CLUSTER_FAIL_ANNOTATION, CLUSTER_FINALIZER } from './controllers/cluster-api.js';
export { HASH_LABEL, REVISION_ANNOTATION } from './controllers/deployment.js';
export { imageBehaviour } from './controllers/kubelet.js';
export { StatusError } from './status.js';
export type { TlsOptions } from './server.js';
export { isKubeSimSnapshot, keepSnapshotFile, readSnapshotFile, type KubeSimSnapshot } from './snapshot.js';

export interface KubeSimOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
  /** Bearer token the host cluster requires on every request; none accepts any request. @default undefined */
  token?: string;
  /** From pod creation to containers started and Ready (and to ImagePullBackOff for failing images). @default 500 */
  podReadyDelayMs?: number;
  /** Time a Cluster API Cluster spends in each phase (Pending, Provisioning; Deleting). @default 1000 */
  clusterPhaseDelayMs?: number;
  /** Simulated nodes of each cluster (host and virtual). @default 3 */
  nodes?: number;
  /** A running container prints a log line this often; 0 prints only the start lines. @default 2000 */
  logIntervalMs?: number;
  /** A `crash` image restarts (restartCount + 1) this often; failing pulls repeat their BackOff event as often. @default 1000 */
  crashLoopIntervalMs?: number;
  /** Multiplies every Deployment's progressDeadlineSeconds (0.001 turns 600 s into 600 ms). @default 1 */
  progressDeadlineFactor?: number;
  /** Changes kept per resource for watches resuming from a resourceVersion; older ones get 410 Expired. @default 10000 */
  watchHistorySize?: number;
  /** How often a watch with allowWatchBookmarks=true gets a BOOKMARK. @default 5000 */
  bookmarkIntervalMs?: number;
  /** Serve HTTPS with this key and certificate instead of plain HTTP. @default undefined */
  tls?: TlsOptions;
  /** Where kube-sim logs (requests at debug level). @default a silent logger */
  logger?: Logger;
  /**
   * Objects to start with, from an earlier `snapshot()`: the host's and every virtual cluster's
   * (with its token, so that kubeconfigs handed out before stay valid). See `snapshot.ts`.
   * @default undefined
   */
  state?: KubeSimSnapshot;
}

export interface VirtualClusterHandle {
  namespace: string;
  name: string;
  /** `<kube-sim url>/vclusters/<namespace>/<name>` */
  url: string;
  token: string;
  /** The kubeconfig YAML also written to the Secret `<name>-kubeconfig` (key `value`). */
  kubeconfig: string;
  kubeConfig(): KubeConfig;
  cluster: SimCluster;
  setAvailable(available: boolean, options?: { mode?: 'error' | 'reset' }): void;
}

export interface KubeSim {
  /** Base URL of the host cluster, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Kubeconfig YAML for the host cluster (with the token, when one is set). */
  kubeconfig: string;
  /** A client-node KubeConfig loaded from {@link kubeconfig}. */
  kubeConfig(): KubeConfig;
  token: string | undefined;
  /** The host cluster itself, for tests that read or write objects without HTTP. */
  host: SimCluster;
  /**
   * Makes the host cluster's API server "down" (`mode: 'error'`: every request answers 503 with a
   * ServiceUnavailable Status; `mode: 'reset'`: connections are reset) or up again. Open watches
   * and followed logs are cut when it goes down. Virtual clusters are not affected.
   */
  setAvailable(available: boolean, options?: { mode?: 'error' | 'reset' }): void;
  readonly available: boolean;
  /** The virtual cluster of the Cluster API Cluster `<namespace>/<name>`, once it is provisioned. */
  virtualCluster(namespace: string, name: string): VirtualClusterHandle | undefined;
  virtualClusters(): VirtualClusterHandle[];
  /** The objects worth keeping of the host and every virtual cluster, for `state` of a later start. */
  snapshot(): KubeSimSnapshot;
  stop(): Promise<void>;
}

export class KubeSimOptionError extends Error {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`kube-sim: option ${option} ${message}`);
    this.name = 'KubeSimOptionError';
  }
}

function integerOption(options: KubeSimOptions, name: keyof KubeSimOptions, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = options[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new KubeSimOptionError(name, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Checked before anything starts, so a wrong option fails loudly and names itself. */
function resolveOptions(options: KubeSimOptions) {
  const factor = options.progressDeadlineFactor ?? 1;
  if (typeof factor !== 'number' || !(factor > 0) || !Number.isFinite(factor)) throw new KubeSimOptionError('progressDeadlineFactor', `must be a positive number, got ${JSON.stringify(factor)}`);
  if (options.token !== undefined && (typeof options.token !== 'string' || options.token.length === 0 || /\s/.test(options.token))) {
    throw new KubeSimOptionError('token', 'must be a non-empty string without spaces');
  }
  if (options.tls && (!options.tls.key || !options.tls.cert)) throw new KubeSimOptionError('tls', 'needs both key and cert');
  return {
    port: integerOption(options, 'port', 0, 0, 65535),
    host: options.host ?? '127.0.0.1',
    token: options.token,
    podReadyDelayMs: integerOption(options, 'podReadyDelayMs', 500, 0),
    clusterPhaseDelayMs: integerOption(options, 'clusterPhaseDelayMs', 1000, 0),
    nodes: integerOption(options, 'nodes', 3, 0, 1000),
    logIntervalMs: integerOption(options, 'logIntervalMs', 2000, 0),
    crashLoopIntervalMs: integerOption(options, 'crashLoopIntervalMs', 1000, 1),
    progressDeadlineFactor: factor,
    watchHistorySize: integerOption(options, 'watchHistorySize', 10_000, 1),
    bookmarkIntervalMs: integerOption(options, 'bookmarkIntervalMs', 5000, 1),
    tls: options.tls,
    logger: options.logger ?? pino({ level: 'silent' }),
  };
}

const newToken = () => `kube-sim-${randomBytes(24).toString('base64url')}`;

function loadKubeConfig(yaml: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return kc;
}

/** Starts kube-sim and answers once it listens. */
export async function startKubeSim(options: KubeSimOptions = {}): Promise<KubeSim> {
  const resolved = resolveOptions(options);
  const { logger } = resolved;
  let baseUrl = '';
  let address = '';
  const virtual = new Map<string, VirtualClusterHandle>();
  const vkey = (namespace: string, name: string) => `${namespace}/${name}`;
  const certificateAuthority = resolved.tls ? (resolved.tls.ca ?? String(resolved.tls.cert)) : undefined;

  const clusterOptions = (name: string, token: string | undefined): SimClusterOptions => ({
    name,
    token,
    podReadyDelayMs: resolved.podReadyDelayMs,
    clusterPhaseDelayMs: resolved.clusterPhaseDelayMs,
    nodes: resolved.nodes,
    logIntervalMs: resolved.logIntervalMs,
    crashLoopIntervalMs: resolved.crashLoopIntervalMs,
    progressDeadlineFactor: resolved.progressDeadlineFactor,
    watchHistorySize: resolved.watchHistorySize,
    bookmarkIntervalMs: resolved.bookmarkIntervalMs,
    logger: logger.child({ cluster: name }),
  });

  /** The virtual cluster of a Cluster API Cluster, started on first use (with a saved token when restoring). */
  const ensureVirtual = (namespace: string, name: string, savedToken?: string): VirtualClusterHandle => {
    let handle = virtual.get(vkey(namespace, name));
    if (!handle) {
      const token = savedToken ?? newToken();
      const cluster = new SimCluster(clusterOptions(`${namespace}/${name}`, token));
      cluster.start();
      const url = `${baseUrl}${VCLUSTER_PREFIX}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
      const kubeconfig = buildKubeconfig({ name: `vcluster-${name}`, server: url, token, certificateAuthority });
      handle = {
        namespace,
        name,
        url,
        token,
        kubeconfig,
        kubeConfig: () => loadKubeConfig(kubeconfig),
        cluster,
        setAvailable: (available, o) => cluster.setAvailable(available, o?.mode),
      };
      virtual.set(vkey(namespace, name), handle);
      logger.info({ namespace, name, url }, 'kube-sim: virtual cluster started');
    }
    return handle;
  };

  const provider: VirtualClusterProvider = {
    ensure(namespace, name) {
      const handle = ensureVirtual(namespace, name);
      return { server: handle.url, token: handle.token, kubeconfig: handle.kubeconfig };
    },
    remove(namespace, name) {
      const handle = virtual.get(vkey(namespace, name));
      if (!handle) return;
      virtual.delete(vkey(namespace, name));
      handle.cluster.stop();
      logger.info({ namespace, name }, 'kube-sim: virtual cluster removed');
    },
  };

  const host = new SimCluster({ ...clusterOptions('host', resolved.token), virtualClusters: provider });
  host.start();
  const server = createKubeSimServer({ host, virtual: (namespace, name) => virtual.get(vkey(namespace, name))?.cluster }, resolved.tls, () => address);

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(resolved.port, resolved.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    host.stop();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  const reachableHost = resolved.host === '0.0.0.0' || resolved.host === '::' ? '127.0.0.1' : resolved.host;
  const hostPart = reachableHost.includes(':') ? `[${reachableHost}]` : reachableHost;
  address = `${hostPart}:${port}`;
  baseUrl = `${resolved.tls ? 'https' : 'http'}://${address}`;
  const kubeconfig = buildKubeconfig({ name: 'kube-sim', server: baseUrl, token: resolved.token, certificateAuthority });
  logger.info({ url: baseUrl }, 'kube-sim: listening');

  if (options.state) {
    // Virtual clusters first (their URLs need the address), then the host: its Cluster API
    // controller then finds each virtual cluster running and rewrites its kubeconfig Secret,
    // in case the address changed.
    for (const v of options.state.virtualClusters) restoreCluster(ensureVirtual(v.namespace, v.name, v.token).cluster, v.state);
    const { restored } = restoreCluster(host, options.state.host);
    logger.info({ restored, virtualClusters: options.state.virtualClusters.length }, 'kube-sim: restored from a snapshot');
  }

  let stopped = false;
  return {
    url: baseUrl,
    kubeconfig,
    kubeConfig: () => loadKubeConfig(kubeconfig),
    token: resolved.token,
    host,
    setAvailable: (available, o) => host.setAvailable(available, o?.mode),
    get available() {
      return host.available;
    },
    virtualCluster: (namespace, name) => virtual.get(vkey(namespace, name)),
    virtualClusters: () => [...virtual.values()],
    snapshot: () => ({
      version: SNAPSHOT_VERSION,
      host: snapshotCluster(host),
      virtualClusters: [...virtual.values()].map((v) => ({ namespace: v.namespace, name: v.name, token: v.token, state: snapshotCluster(v.cluster) })),
    }),
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const handle of virtual.values()) handle.cluster.stop();
      virtual.clear();
      host.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
