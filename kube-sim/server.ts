/**
 * The HTTP(S) front of kube-sim: finds the cluster a request is for (the host, or a virtual
 * cluster under `/vclusters/{namespace}/{name}`), answers 503 (or resets the connection) while
 * that cluster is set unavailable, checks its bearer token, then hands over to `api.ts`.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { handleApi, sendError } from './api.js';
import type { SimCluster } from './cluster.js';
import { errors, StatusError } from './status.js';

export const VCLUSTER_PREFIX = '/vclusters';

export interface ClusterRouting {
  host: SimCluster;
  virtual(namespace: string, name: string): SimCluster | undefined;
}

export interface TlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
  /** PEM of the CA that signed `cert`, written into kubeconfigs; omitted: the certificate itself. */
  ca?: string;
}

/** Paths answered without a token, as the API server lets anyone read them. */
const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

function tokenMatches(header: string | undefined, expected: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const given = Buffer.from(m[1]!.trim());
  const want = Buffer.from(expected);
  return given.length === want.length && timingSafeEqual(given, want);
}

export function createKubeSimServer(routing: ClusterRouting, tls: TlsOptions | undefined, serverAddress: () => string): Server {
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://kube-sim');
    let path = url.pathname;
    let cluster: SimCluster | undefined = routing.host;
    if (path === VCLUSTER_PREFIX || path.startsWith(`${VCLUSTER_PREFIX}/`)) {
      const m = /^\/vclusters\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path);
      let namespace = '';
      let name = '';
      try {
        namespace = m ? decodeURIComponent(m[1]!) : '';
        name = m ? decodeURIComponent(m[2]!) : '';
      } catch {
        // A malformed escape is an unknown virtual cluster.
      }
      cluster = m ? routing.virtual(namespace, name) : undefined;
      if (!cluster) {
        sendError(res, new StatusError(404, 'NotFound', `kube-sim serves no virtual cluster "${namespace}/${name}"`, { name, kind: 'vclusters' }));
        return;
      }
      path = m![3] ?? '/';
    }
    if (!cluster.available) {
      if (cluster.unavailableMode === 'reset') {
        req.socket.destroy();
        return;
      }
      sendError(res, errors.unavailable());
      return;
    }
    const token = cluster.options.token;
    if (token && !PUBLIC_PATHS.has(path) && !tokenMatches(req.headers.authorization, token)) {
      sendError(res, errors.unauthorized());
      return;
    }
    const started = performance.now();
    res.on('finish', () => {
      cluster!.logger.debug({ cluster: cluster!.name, method: req.method, path, query: url.search, status: res.statusCode, ms: Math.round(performance.now() - started) }, 'kube-sim request');
    });
    void handleApi(cluster, { method: req.method ?? 'GET', path, query: url.searchParams, req, res, serverAddress: serverAddress() });
  };
  const server = tls ? createHttpsServer({ key: tls.key, cert: tls.cert }, handler) : createHttpServer(handler);
  // Watches and followed logs stay open for as long as clients want them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  return server as Server;
}
