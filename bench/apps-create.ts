/**
 * The requests of the `create app` target of `npm run bench -- apps`: `POST /apps` bodies, each
 * naming an app of its own, built as they are sent.
 *
 * autocannon runs in a worker thread and functions cannot cross into it, so this module is handed
 * to it by path and `require`d there: what it exports as `module.exports` is the
 * `setupRequest(request, context)` called before every request, `context` being a
 * {@link CreateContext} structured-cloned into the worker. Node built-ins only: the whole import
 * graph is loaded again in every worker.
 *
 * The benchmark process imports the same module to build its own requests.
 */
import { randomBytes } from 'node:crypto';

/** What setupRequest needs to know, passed as autocannon's `initialContext`. */
export interface CreateContext {
  cloudspaceId: string;
}

/** The part of autocannon's request object this module touches. */
interface AutocannonRequest {
  body?: string | Buffer;
}

/**
 * A create request as a client would send it: one atomic request with everything (image, port,
 * resources, TLS, one plain variable and a health check). No secret variable: those add a Secret
 * in the virtual cluster per app, which the load does not need to measure the request itself.
 */
export function createBody(cloudspaceId: string, name: string): string {
  return JSON.stringify({
    name,
    cloudspace_id: cloudspaceId,
    source: { type: 'image', image: 'nginx:1.27' },
    port: 8080,
    resources: { cpu_request: '10m', memory_request: '16Mi' },
    tls: true,
    env: [{ name: 'MODE', value: 'bench' }],
    health_check: { path: '/', initial_delay_secs: 0 },
  });
}

/** Distinct in every worker (each autocannon run starts a new one), so names never repeat. */
const origin = `b${randomBytes(4).toString('hex')}`;
let sequence = 0;

/** The next app's name: a DNS label of at most 20 characters. */
export function nextName(): string {
  sequence += 1;
  return `${origin}-${sequence}`;
}

function setupRequest(request: AutocannonRequest, context: CreateContext): AutocannonRequest {
  request.body = createBody(context.cloudspaceId, nextName());
  return request;
}

export { setupRequest as 'module.exports' };
