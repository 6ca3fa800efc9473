/** What the kube-sim test files share (not a test file itself). */
import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi, KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';

export interface Clients {
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
}

export function clients(kc: KubeConfig): Clients {
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
  };
}

export interface StatusAnswer {
  code: number;
  reason?: string;
  message?: string;
  details?: { name?: string; group?: string; kind?: string; causes?: { reason: string; message: string; field?: string }[] };
  kind?: string;
}

/** The Kubernetes Status a rejected client-node call carried. */
export async function statusOf(call: Promise<unknown>): Promise<StatusAnswer> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body = typeof error.body === 'string' ? error.body : JSON.stringify(error.body);
    let parsed: Partial<StatusAnswer> = {};
    try {
      parsed = JSON.parse(body) as StatusAnswer;
    } catch {
      // Some answers (logs, metrics) carry no JSON.
    }
    return { ...parsed, code: error.code };
  }
  throw new Error('expected the call to be refused, it succeeded');
}

/** Polls `check` until it returns a value other than undefined/false (or stops throwing). */
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 5000): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function deploymentManifest(name: string, namespace: string, options: { replicas?: number; image?: string; cpu?: string } = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: options.replicas ?? 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'app',
              image: options.image ?? 'nginx:1.25',
              ports: [{ containerPort: 8080 }],
              env: [{ name: 'MODE', value: 'one' }],
              ...(options.cpu ? { resources: { requests: { cpu: options.cpu, memory: '64Mi' } } } : {}),
            },
          ],
        },
      },
    },
  };
}
