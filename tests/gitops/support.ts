/** What the gitops test files share (not a test file itself). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { KubeSim, VirtualClusterHandle } from '../../kube-sim/index.js';
import { clientsFor, isNotFound, type KubeClients } from '../../subgraphs/platform/orchestrator/kube.js';

export const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** A temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `cloudops-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Polls `check` until it returns a value other than undefined/false (or stops throwing). */
export async function eventually<T>(check: () => T | Promise<T>, what: string, timeoutMs = 10_000): Promise<Exclude<T, undefined | false>> {
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
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Makes a virtual cluster on kube-sim's host as the platform does: the CloudSpace namespace, a
 * `VCluster` and a Cluster API `Cluster` whose infrastructure it is; waits for the
 * `<name>-kubeconfig` Secret.
 */
export async function createVirtualCluster(sim: KubeSim, namespace: string, name: string): Promise<VirtualClusterHandle> {
  const host = clientsFor(sim.kubeConfig());
  try {
    await host.core.readNamespace({ name: namespace });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await host.core.createNamespace({ body: { metadata: { name: namespace } } });
  }
  await host.custom.createNamespacedCustomObject({
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1alpha1',
    namespace,
    plural: 'vclusters',
    body: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: 'VCluster', metadata: { name }, spec: {} },
  });
  await host.custom.createNamespacedCustomObject({
    group: 'cluster.x-k8s.io',
    version: 'v1beta1',
    namespace,
    plural: 'clusters',
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name },
      spec: {
        controlPlaneRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: 'VCluster', name },
        infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: 'VCluster', name },
      },
    },
  });
  await eventually(async () => (await host.core.readNamespacedSecret({ namespace, name: `${name}-kubeconfig` })).data?.value, `${namespace}/${name}-kubeconfig`);
  return eventually(() => sim.virtualCluster(namespace, name), `virtual cluster ${namespace}/${name}`);
}

export const vclients = (handle: VirtualClusterHandle): KubeClients => clientsFor(handle.kubeConfig());

/** The manifests the app controller renders for one app: a Deployment, a Service and an Ingress. */
export function appManifests(options: { app: string; namespace: string; image: string; host: string; replicas?: number }): Record<string, string> {
  const { app, namespace, image, host } = options;
  const labels = `app.kubernetes.io/name: ${app}`;
  return {
    'deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${app}
  namespace: ${namespace}
  labels:
    ${labels}
spec:
  replicas: ${options.replicas ?? 1}
  selector:
    matchLabels:
      ${labels}
  template:
    metadata:
      labels:
        ${labels}
    spec:
      containers:
        - name: app
          image: ${image}
          ports:
            - containerPort: 8080
`,
    'service.yaml': `apiVersion: v1
kind: Service
metadata:
  name: ${app}
  namespace: ${namespace}
  labels:
    ${labels}
spec:
  selector:
    ${labels}
  ports:
    - port: 80
      targetPort: 8080
`,
    'ingress.yaml': `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${app}
  namespace: ${namespace}
  labels:
    ${labels}
spec:
  rules:
    - host: ${host}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: ${app}
                port:
                  number: 80
`,
  };
}
