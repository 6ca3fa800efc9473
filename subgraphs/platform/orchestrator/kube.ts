import { ApiException, AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi, NetworkingV1Api, VersionApi } from '@kubernetes/client-node';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Logger } from '../../../kernel/logger.js';

/** The typed clients of one cluster, made from one KubeConfig. */
export interface KubeClients {
  kubeConfig: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  networking: NetworkingV1Api;
  custom: CustomObjectsApi;
  version: VersionApi;
  /** Any kind by its manifest (server-side apply). Made once per cluster: it caches API discovery. */
  objects: KubernetesObjectApi;
}

export function clientsFor(kubeConfig: KubeConfig): KubeClients {
  return {
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    apps: kubeConfig.makeApiClient(AppsV1Api),
    batch: kubeConfig.makeApiClient(BatchV1Api),
    networking: kubeConfig.makeApiClient(NetworkingV1Api),
    custom: kubeConfig.makeApiClient(CustomObjectsApi),
    version: kubeConfig.makeApiClient(VersionApi),
    objects: KubernetesObjectApi.makeApiClient(kubeConfig),
  };
}

/** Parses a kubeconfig given as YAML or JSON; a clear 400 when it is not one. */
export function parseKubeconfig(text: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
  } catch (error) {
    throw new AppError(ErrorCodes.validationFailed, `kubeconfig is not a valid kubeconfig: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!kc.getCurrentCluster()) throw new AppError(ErrorCodes.validationFailed, 'kubeconfig names no current cluster');
  return kc;
}

/** The HTTP status a failed client-node call carried, or undefined for network errors. */
export function kubeStatus(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export const isNotFound = (error: unknown) => kubeStatus(error) === 404;
export const isConflict = (error: unknown) => kubeStatus(error) === 409;

/** Runs a Kubernetes call; a 404 answers undefined instead of throwing. */
export async function orUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** A failed call to a cluster as the API user should see it: 503 `upstream_unavailable`, naming the cluster. */
export function clusterUnavailable(what: string, error: unknown): AppError {
  const status = kubeStatus(error);
  const detail = status ? `answered ${status}` : `is not reachable (${(error as Error)?.message ?? String(error)})`;
  return new AppError(ErrorCodes.upstreamUnavailable, `${what} ${detail}`.slice(0, 300));
}

/**
 * The management (host) cluster: from KUBECONFIG, from the pod's service account when running
 * in a cluster, or none (Kubernetes routes then answer 503 upstream_unavailable).
 */
export function loadHostKubeConfig(path: string | undefined, logger: Logger): KubeConfig | undefined {
  const kc = new KubeConfig();
  if (path) {
    kc.loadFromFile(path);
    logger.info({ kubeconfig: path, server: kc.getCurrentCluster()?.server }, 'management cluster from KUBECONFIG');
    return kc;
  }
  if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster();
    logger.info({ server: kc.getCurrentCluster()?.server }, 'management cluster from the in-cluster service account');
    return kc;
  }
  logger.warn('no management cluster configured (KUBECONFIG unset, not in a cluster): cluster and CloudSpace operations answer 503');
  return undefined;
}

/**
 * Clients of virtual clusters, built from each one's kubeconfig Secret on the cluster hosting it
 * (`<name>-kubeconfig`, key `value`, the Cluster API vcluster provider's convention) and kept
 * briefly. A client whose cluster refuses its credentials (401/403) is dropped, so a rotated
 * kubeconfig is picked up on the next call.
 */
export class VirtualClusterClients {
  private readonly cache = new Map<string, { clients: KubeClients; expires: number }>();

  constructor(
    private readonly host: () => Promise<KubeClients>,
    private readonly ttlMs = 60_000,
  ) {}

  async get(namespace: string, name: string): Promise<KubeClients> {
    const key = `${namespace}/${name}`;
    const hit = this.cache.get(key);
    if (hit && hit.expires > Date.now()) return hit.clients;
    const kubeconfig = await this.readKubeconfig(namespace, name);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    const clients = clientsFor(kc);
    this.cache.set(key, { clients, expires: Date.now() + this.ttlMs });
    return clients;
  }

  /** The kubeconfig YAML of a virtual cluster; undefined while its Secret does not exist. */
  async readKubeconfig(namespace: string, name: string): Promise<string> {
    const secret = await orUndefined((await this.host()).core.readNamespacedSecret({ namespace, name: `${name}-kubeconfig` }));
    const value = secret?.data?.value;
    if (!value) throw new AppError(ErrorCodes.conflict, `virtual cluster ${name} is not ready yet (no kubeconfig)`);
    return Buffer.from(value, 'base64').toString('utf8');
  }

  /** Runs `fn` with the virtual cluster's clients; on 401/403 drops them and tries once more with fresh ones. */
  async with<T>(namespace: string, name: string, fn: (clients: KubeClients) => Promise<T>): Promise<T> {
    try {
      return await fn(await this.get(namespace, name));
    } catch (error) {
      const status = kubeStatus(error);
      if (status !== 401 && status !== 403) throw error;
      this.cache.delete(`${namespace}/${name}`);
      return fn(await this.get(namespace, name));
    }
  }

  drop(namespace: string, name: string): void {
    this.cache.delete(`${namespace}/${name}`);
  }
}
