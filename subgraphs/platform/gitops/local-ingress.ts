/**
 * The local HTTPS ingress: in the local profile it stands in for DNS, the certificate issuer, the
 * ingress controller and the app itself, so that the platform's reachability check ("does
 * `https://<app address>/` answer?") has something real to connect to.
 *
 * - It serves HTTPS with certificates signed by its own CA ({@link LocalIngress.caPem}): one per
 *   SNI name, generated on demand and cached (a default one for `localhost`/the listen address
 *   when the client sends no SNI).
 * - For a request with `Host: <address>` it looks, in every virtual cluster the resolver names,
 *   for an `Ingress` (networking.k8s.io/v1) whose `spec.rules[].host` is that address, follows
 *   the matching path's (or the default) backend Service's selector to its Pods, and answers
 *   **200** (a short text naming the app, the pod and its image) when at least one selected pod is
 *   Ready, **503** when none is (or the Service/cluster is missing or unreachable), **404** when no
 *   Ingress has that host.
 * - Lookups are cached for at most one second (the Ingress index and each backend's ready pods),
 *   so it takes load without hammering the clusters.
 *
 * Connect with the CA and SNI = the app address, e.g. with undici:
 *
 * ```ts
 * const agent = new Agent({ connect: { ca: ingress.caPem, servername: address } });
 * await request(`${ingress.url}/`, { dispatcher: agent, headers: { host: address } });
 * ```
 *
 * Uses the `selfsigned` package (a devDependency, like everything of the local profile), loaded
 * only when the ingress starts.
 */
import { createPrivateKey } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { KubeConfig, V1Ingress, V1IngressBackend, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../../kernel/logger.js';
import { clientsFor, isNotFound, type KubeClients } from '../orchestrator/kube.js';
import { describeKubeError } from './local-applier.js';

/** A cluster the ingress looks for Ingresses in. */
export interface IngressCluster {
  /** A name for logs and answers (e.g. the vcluster's name, or `<namespace>/<vcluster>`). */
  name?: string;
  /** The host namespace of the virtual cluster, when known: names it `<namespace>/<name>`. */
  namespace?: string;
  kubeConfig: KubeConfig;
}

/** Answers the clusters to search, now. Called at most once per cache period. */
export type IngressClusterResolver = () => Iterable<IngressCluster> | Promise<Iterable<IngressCluster>>;

/** A CA as PEM (key: PKCS#8). */
export interface IngressCa {
  cert: string;
  key: string;
}

export interface LocalIngressOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
  /** The virtual clusters (see also `virtualClustersFromHost` in ./virtual-clusters.ts). */
  virtualClusters: IngressClusterResolver;
  logger: Logger;
  /** How long lookups are cached, in ms (at most 1000). @default 1000 */
  cacheMs?: number;
  /** Sign with this CA instead of a new one (e.g. one the local profile keeps in `.data`). */
  ca?: IngressCa;
}

/** What the ingress answers for a host (and path). */
export interface IngressAnswer {
  status: 200 | 404 | 503;
  /** The app's name: the Ingress's `app.kubernetes.io/name` or `app` label, else its name. */
  app?: string;
  /** The cluster the Ingress was found in. */
  cluster?: string;
  namespace?: string;
  ingress?: string;
  service?: string;
  /** The ready pod that "served" it (200). */
  pod?: string;
  image?: string;
  /** Why it is not 200. */
  reason?: string;
}

export interface LocalIngress {
  /** `https://<host>:<port>` */
  url: string;
  port: number;
  /** The CA certificate every served certificate chains to. */
  caPem: string;
  /** What a request for `host` (and `path`) would be answered, without HTTP. */
  resolve(host: string, path?: string): Promise<IngressAnswer>;
  stop(): Promise<void>;
}

const HOSTNAME = /^(?=.{1,253}$)(\*\.)?[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;
const MAX_CERTIFICATES = 512;
const DAY = 86_400_000;

type Generate = (typeof import('selfsigned'))['generate'];

async function loadGenerate(): Promise<Generate> {
  const mod = (await import('selfsigned')) as unknown as { generate?: Generate; default?: { generate?: Generate } };
  const generate = mod.generate ?? mod.default?.generate;
  if (!generate) throw new Error('the selfsigned package has no generate()');
  return generate;
}

/** Creates a CA for the local ingress (EC P-256, ten years). */
export async function createIngressCa(commonName = 'cloudops local ingress CA'): Promise<IngressCa> {
  const generate = await loadGenerate();
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: commonName }, { name: 'organizationName', value: 'cloudops local profile' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - DAY),
    notAfterDate: new Date(now + 3650 * DAY),
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

const displayName = (cluster: IngressCluster): string | undefined => (cluster.namespace && cluster.name ? `${cluster.namespace}/${cluster.name}` : cluster.name);

/** A certificate followed by its issuer, as PEM. */
const chain = (...pems: string[]) => pems.map((pem) => `${pem.trim()}\n`).join('');

function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  let host = header.trim().toLowerCase();
  if (host.startsWith('[')) return undefined; // IPv6 literals name no app
  host = host.replace(/:\d+$/, '').replace(/\.$/, '');
  return HOSTNAME.test(host) ? host : undefined;
}

function isReady(pod: V1Pod): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  return pod.status?.phase === 'Running' && (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

function pickBackend(ingress: V1Ingress, host: string, path: string): V1IngressBackend | undefined {
  let best: { backend: V1IngressBackend; length: number } | undefined;
  for (const rule of ingress.spec?.rules ?? []) {
    if (rule.host?.toLowerCase() !== host) continue;
    for (const candidate of rule.http?.paths ?? []) {
      const p = candidate.path || '/';
      const type = candidate.pathType ?? 'Prefix';
      const matches = type === 'Exact' ? path === p : p === '/' || path === p || path.startsWith(p.endsWith('/') ? p : `${p}/`);
      if (matches && (!best || p.length > best.length)) best = { backend: candidate.backend, length: p.length };
    }
  }
  return best?.backend ?? ingress.spec?.defaultBackend;
}

interface Route {
  clusterKey: string;
  clusterName: string;
  clients: KubeClients;
  ingress: V1Ingress;
  created: number;
}

interface BackendAnswer {
  ready: V1Pod[];
  reason?: string;
  expires: number;
}

/** Starts the local ingress and answers once it listens. */
export async function startLocalIngress(options: LocalIngressOptions): Promise<LocalIngress> {
  const log = options.logger.child({ component: 'local-ingress' });
  const cacheMs = Math.max(0, Math.min(1000, options.cacheMs ?? 1000));
  const listenHost = options.host ?? '127.0.0.1';
  const generate = await loadGenerate();
  const ca = options.ca ?? (await createIngressCa());
  const caKeyType = createPrivateKey(ca.key).asymmetricKeyType === 'rsa' ? 'rsa' : 'ec';

  // --- certificates --------------------------------------------------------------------
  const contexts = new Map<string, Promise<SecureContext>>();
  async function issue(names: string[], ips: string[]): Promise<SecureContext> {
    const now = Date.now();
    const pems = await generate([{ name: 'commonName', value: names[0] ?? ips[0] ?? 'localhost' }], {
      keyType: caKeyType,
      algorithm: 'sha256',
      notBeforeDate: new Date(now - DAY),
      notAfterDate: new Date(now + 365 * DAY),
      ca: { key: ca.key, cert: ca.cert },
      extensions: [
        { name: 'basicConstraints', cA: false, critical: true },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: caKeyType === 'rsa', critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [...names.map((value) => ({ type: 2 as const, value })), ...ips.map((ip) => ({ type: 7 as const, ip }))] },
      ],
    });
    return createSecureContext({ key: pems.private, cert: chain(pems.cert, ca.cert) });
  }
  function contextFor(servername: string): Promise<SecureContext> {
    let context = contexts.get(servername);
    if (context) {
      contexts.delete(servername); // most recently used last
      contexts.set(servername, context);
      return context;
    }
    context = issue([servername], []);
    context.catch(() => contexts.delete(servername));
    contexts.set(servername, context);
    while (contexts.size > MAX_CERTIFICATES) contexts.delete(contexts.keys().next().value!);
    return context;
  }
  const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(listenHost) ? [listenHost] : [];
  const defaultPems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: caKeyType,
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - DAY),
    ca: { key: ca.key, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: caKeyType === 'rsa', critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, ...[...new Set(['127.0.0.1', ...ipv4])].map((ip) => ({ type: 7 as const, ip }))] },
    ],
  });

  // --- the Ingress index ------------------------------------------------------------------
  const clientCache = new Map<string, KubeClients>();
  const clusterRoutes = new Map<string, Route[]>();
  let index = new Map<string, Route>();
  let indexExpires = 0;
  let indexing: Promise<Map<string, Route>> | undefined;

  function clusterKey(cluster: IngressCluster): string {
    const kc = cluster.kubeConfig;
    const user = kc.getCurrentUser();
    return `${displayName(cluster) ?? ''}|${kc.getCurrentCluster()?.server ?? ''}|${user?.token ?? user?.name ?? ''}`;
  }

  async function buildIndex(): Promise<Map<string, Route>> {
    const clusters = [...(await options.virtualClusters())];
    const keys = new Set<string>();
    await Promise.all(
      clusters.map(async (cluster) => {
        const key = clusterKey(cluster);
        keys.add(key);
        let clients = clientCache.get(key);
        if (!clients) {
          clients = clientsFor(cluster.kubeConfig);
          clientCache.set(key, clients);
        }
        const name = displayName(cluster) ?? cluster.kubeConfig.getCurrentCluster()?.server ?? key;
        try {
          const list = await clients.networking.listIngressForAllNamespaces();
          clusterRoutes.set(
            key,
            list.items.map((ingress) => ({ clusterKey: key, clusterName: name, clients: clients!, ingress, created: new Date(ingress.metadata?.creationTimestamp ?? 0).getTime() })),
          );
        } catch (error) {
          // Keep what was known: its hosts then answer 503 (backend unreachable), not 404.
          log.debug({ cluster: name, err: describeKubeError(error) }, 'local ingress: cannot list Ingresses');
        }
      }),
    );
    for (const key of [...clusterRoutes.keys()]) if (!keys.has(key)) clusterRoutes.delete(key);
    for (const key of [...clientCache.keys()]) if (!keys.has(key)) clientCache.delete(key);
    const next = new Map<string, Route>();
    const all = [...clusterRoutes.values()].flat().sort((a, b) => a.created - b.created);
    for (const route of all) {
      for (const rule of route.ingress.spec?.rules ?? []) {
        const host = rule.host?.toLowerCase();
        if (host && !next.has(host)) next.set(host, route); // the oldest Ingress claiming a host wins
      }
    }
    return next;
  }

  async function routes(): Promise<Map<string, Route>> {
    if (Date.now() < indexExpires) return index;
    indexing ??= buildIndex()
      .then(
        (built) => built,
        (error: unknown) => {
          // The resolver failed (e.g. the host cluster is down): keep what was known for a while.
          log.warn({ err: describeKubeError(error) }, 'local ingress: cannot list the virtual clusters');
          return index;
        },
      )
      .then((built) => {
        index = built;
        indexExpires = Date.now() + cacheMs;
        return built;
      })
      .finally(() => {
        indexing = undefined;
      });
    return indexing;
  }

  // --- backends ---------------------------------------------------------------------------
  const backends = new Map<string, BackendAnswer | Promise<BackendAnswer>>();
  async function lookupBackend(route: Route, service: string): Promise<BackendAnswer> {
    const namespace = route.ingress.metadata?.namespace ?? 'default';
    const expires = Date.now() + cacheMs;
    try {
      const svc = await route.clients.core.readNamespacedService({ namespace, name: service });
      const selector = svc.spec?.selector ?? {};
      const labelSelector = Object.entries(selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      if (!labelSelector) return { ready: [], reason: `service ${service} has no selector`, expires };
      const pods = await route.clients.core.listNamespacedPod({ namespace, labelSelector });
      const ready = pods.items.filter(isReady);
      return { ready, reason: ready.length ? undefined : `no ready pod behind service ${service} (${pods.items.length} selected)`, expires };
    } catch (error) {
      if (isNotFound(error)) return { ready: [], reason: `service ${service} not found`, expires };
      return { ready: [], reason: `cluster ${route.clusterName} not reachable: ${describeKubeError(error)}`, expires };
    }
  }
  function backend(route: Route, service: string): Promise<BackendAnswer> {
    const key = `${route.clusterKey}/${route.ingress.metadata?.namespace}/${service}`;
    const hit = backends.get(key);
    if (hit && (hit instanceof Promise || hit.expires > Date.now())) return Promise.resolve(hit);
    const pending = lookupBackend(route, service).then((answer) => {
      backends.set(key, answer);
      if (backends.size > 4096) for (const [k, v] of backends) if (!(v instanceof Promise) && v.expires <= Date.now()) backends.delete(k);
      return answer;
    });
    backends.set(key, pending);
    return pending;
  }

  let turn = 0;
  async function resolveHost(host: string, path = '/'): Promise<IngressAnswer> {
    const name = hostOf(host);
    if (!name) return { status: 404, reason: 'no valid host' };
    const route = (await routes()).get(name);
    if (!route) return { status: 404, reason: `no Ingress has the host ${name}` };
    const ingress = route.ingress;
    const labels = ingress.metadata?.labels ?? {};
    const base: IngressAnswer = {
      status: 503,
      app: labels['app.kubernetes.io/name'] ?? labels.app ?? ingress.metadata?.name,
      cluster: route.clusterName,
      namespace: ingress.metadata?.namespace,
      ingress: ingress.metadata?.name,
    };
    const selected = pickBackend(ingress, name, path);
    if (!selected) return { ...base, status: 404, reason: `Ingress ${ingress.metadata?.name} has no backend for ${path}` };
    const service = selected.service?.name;
    if (!service) return { ...base, reason: `Ingress ${ingress.metadata?.name}: the backend is not a Service` };
    const answer = await backend(route, service);
    if (answer.ready.length === 0) return { ...base, service, reason: answer.reason };
    const pod = answer.ready[turn++ % answer.ready.length]!;
    const image = pod.spec?.containers?.[0]?.image;
    return { ...base, status: 200, service, pod: pod.metadata?.name, image };
  }

  // --- HTTP ---------------------------------------------------------------------------------
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] || '/';
    let answer: IngressAnswer;
    try {
      answer = await resolveHost(req.headers.host ?? '', path);
    } catch (error) {
      log.warn({ err: describeKubeError(error) }, 'local ingress: lookup failed');
      answer = { status: 503, reason: 'lookup failed' };
    }
    const body =
      answer.status === 200
        ? `app ${answer.app} served by pod ${answer.pod} (image ${answer.image})\n`
        : answer.status === 404
          ? `404 not found: ${answer.reason}\n`
          : `503 service unavailable: app ${answer.app}: ${answer.reason}\n`;
    const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store' };
    if (answer.app) headers['x-app'] = answer.app;
    if (answer.pod) headers['x-pod'] = answer.pod;
    if (answer.status === 503) headers['retry-after'] = '1';
    res.writeHead(answer.status, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  const server: Server = createServer(
    {
      key: defaultPems.private,
      cert: chain(defaultPems.cert, ca.cert),
      SNICallback: (servername, callback) => {
        const name = servername.toLowerCase().replace(/\.$/, '');
        if (!HOSTNAME.test(name)) return callback(null, undefined);
        contextFor(name).then(
          (context) => callback(null, context),
          (error: Error) => callback(error, undefined),
        );
      },
      keepAliveTimeout: 5000,
    },
    (req, res) => {
      handle(req, res).catch((error) => {
        log.error({ err: (error as Error).message }, 'local ingress: request failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    },
  );
  server.on('tlsClientError', (error) => log.debug({ err: error.message }, 'local ingress: TLS handshake failed'));

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, listenHost, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostPart = listenHost.includes(':') ? `[${listenHost}]` : listenHost === '0.0.0.0' ? '127.0.0.1' : listenHost;
  const url = `https://${hostPart}:${port}`;
  log.info({ url }, 'local ingress listening');

  let stopped = false;
  return {
    url,
    port,
    caPem: ca.cert,
    resolve: (host, path) => resolveHost(host, path),
    async stop() {
      if (stopped) return;
      stopped = true;
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
    },
  };
}
