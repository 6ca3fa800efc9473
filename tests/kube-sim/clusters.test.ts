/**
 * Cluster API on the host cluster and the virtual clusters kube-sim serves for VCluster
 * Clusters: phases, the kubeconfig Secret and a client built from it, isolation between
 * clusters, tokens, deletion and the failure annotation.
 */
import { KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { clients, deploymentManifest, eventually, statusOf, type Clients } from './support.js';

let sim: KubeSim;
let host: Clients;
const NS = 'tenants';
const CAPI = { group: 'cluster.x-k8s.io', version: 'v1beta1', namespace: NS, plural: 'clusters' };
const VCLUSTER = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1alpha1', namespace: NS, plural: 'vclusters' };

interface ClusterObject {
  metadata: { name: string; finalizers?: string[]; deletionTimestamp?: string };
  status?: { phase?: string; infrastructureReady?: boolean; controlPlaneReady?: boolean; conditions?: { type: string; status: string }[]; failureReason?: string };
}

function clusterManifest(name: string, infraKind = 'VCluster', annotations: Record<string, string> = {}) {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Cluster',
    metadata: { name, annotations },
    spec: {
      controlPlaneRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: infraKind, name },
      infrastructureRef: { apiVersion: infraKind === 'VCluster' ? 'infrastructure.cluster.x-k8s.io/v1alpha1' : 'infrastructure.cluster.x-k8s.io/v1beta1', kind: infraKind, name },
    },
  };
}

async function readCluster(name: string): Promise<ClusterObject> {
  return (await host.custom.getNamespacedCustomObject({ ...CAPI, name })) as ClusterObject;
}

async function provisioned(name: string): Promise<ClusterObject> {
  return eventually(async () => {
    const c = await readCluster(name);
    return c.status?.phase === 'Provisioned' ? c : undefined;
  }, `cluster ${name} Provisioned`);
}

/** The client a platform would build: from the kubeconfig in the Secret `<name>-kubeconfig`. */
async function virtualClient(name: string): Promise<{ kc: KubeConfig; api: Clients; yaml: string }> {
  const secret = await host.core.readNamespacedSecret({ name: `${name}-kubeconfig`, namespace: NS });
  const yaml = Buffer.from(secret.data!.value!, 'base64').toString('utf8');
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return { kc, api: clients(kc), yaml };
}

beforeAll(async () => {
  sim = await startKubeSim({ podReadyDelayMs: 0, clusterPhaseDelayMs: 40, nodes: 1, token: 'host-token' });
  host = clients(sim.kubeConfig());
  await host.core.createNamespace({ body: { metadata: { name: NS } } });
});

afterAll(async () => {
  await sim.stop();
});

it('moves a Cluster through Pending, Provisioning and Provisioned, visible on a watch', async () => {
  const phases: string[] = [];
  const controller = await new Watch(sim.kubeConfig()).watch(
    `/apis/cluster.x-k8s.io/v1beta1/namespaces/${NS}/clusters`,
    { fieldSelector: 'metadata.name=alpha' },
    (_type, object: ClusterObject) => {
      const phase = object.status?.phase;
      if (phase && phases[phases.length - 1] !== phase) phases.push(phase);
    },
    () => {},
  );
  await host.custom.createNamespacedCustomObject({ ...VCLUSTER, body: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: 'VCluster', metadata: { name: 'alpha' }, spec: {} } });
  await host.custom.createNamespacedCustomObject({ ...CAPI, body: clusterManifest('alpha') });
  const c = await provisioned('alpha');
  controller.abort();
  expect(phases).toEqual(['Pending', 'Provisioning', 'Provisioned']);
  expect(c.status).toMatchObject({ infrastructureReady: true, controlPlaneReady: true });
  expect(c.status?.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]));
  expect(c.metadata.finalizers).toContain('cluster.cluster.x-k8s.io');
  const vcluster = (await host.custom.getNamespacedCustomObject({ ...VCLUSTER, name: 'alpha' })) as { status: { ready: boolean } };
  expect(vcluster.status.ready).toBe(true);
});

it('writes the kubeconfig Secret of a VCluster Cluster, and a client built from it reaches its own virtual cluster', async () => {
  const secret = await host.core.readNamespacedSecret({ name: 'alpha-kubeconfig', namespace: NS });
  expect(secret.type).toBe('cluster.x-k8s.io/secret');
  expect(secret.metadata?.labels?.['cluster.x-k8s.io/cluster-name']).toBe('alpha');
  expect(Object.keys(secret.data ?? {})).toEqual(['value']);
  const { api, kc, yaml } = await virtualClient('alpha');
  expect(kc.getCurrentCluster()?.server).toBe(`${sim.url}/vclusters/${NS}/alpha`);
  expect(kc.getCurrentUser()?.token).toMatch(/^kube-sim-/);
  expect(yaml).not.toContain('host-token');

  const namespaces = (await api.core.listNamespace()).items.map((n) => n.metadata?.name);
  expect(namespaces).toEqual(expect.arrayContaining(['default', 'kube-system']));
  expect(namespaces).not.toContain(NS);
  await api.core.createNamespace({ body: { metadata: { name: 'shop' } } });
  await api.apps.createNamespacedDeployment({ namespace: 'shop', body: deploymentManifest('web', 'shop', { replicas: 2 }) });
  await eventually(async () => (await api.apps.readNamespacedDeployment({ name: 'web', namespace: 'shop' })).status?.readyReplicas === 2, 'the deployment in the virtual cluster ready');
  const pods = (await api.core.listNamespacedPod({ namespace: 'shop' })).items;
  expect(pods).toHaveLength(2);
  const logs = await api.core.readNamespacedPodLog({ name: pods[0]!.metadata!.name!, namespace: 'shop' });
  expect(logs).toContain('starting app');
  // The host sees none of it.
  expect((await statusOf(host.core.readNamespace({ name: 'shop' }))).code).toBe(404);
  expect(sim.virtualCluster(NS, 'alpha')?.cluster.store.count('pods', 'shop')).toBe(2);
});

it('keeps virtual clusters apart: each has its own objects and its own token', async () => {
  await host.custom.createNamespacedCustomObject({ ...CAPI, body: clusterManifest('beta') });
  await provisioned('beta');
  const alpha = await virtualClient('alpha');
  const beta = await virtualClient('beta');
  expect((await statusOf(beta.api.core.readNamespace({ name: 'shop' }))).code).toBe(404);

  // No token, or another cluster's token: 401 Unauthorized Status.
  const url = `${sim.url}/vclusters/${NS}/beta/api/v1/namespaces`;
  const anonymous = await fetch(url);
  expect(anonymous.status).toBe(401);
  expect(await anonymous.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  const crossed = await fetch(url, { headers: { authorization: `Bearer ${alpha.kc.getCurrentUser()?.token}` } });
  expect(crossed.status).toBe(401);
  const hostToken = await fetch(url, { headers: { authorization: 'Bearer host-token' } });
  expect(hostToken.status).toBe(401);
  expect((await fetch(`${sim.url}/vclusters/${NS}/nope/api/v1/namespaces`)).status).toBe(404);
});

it('takes a virtual cluster down on its own', async () => {
  const alpha = await virtualClient('alpha');
  sim.virtualCluster(NS, 'alpha')!.setAvailable(false);
  expect((await statusOf(alpha.api.core.listNamespace())).code).toBe(503);
  expect((await host.core.listNamespace()).items.length).toBeGreaterThan(0);
  sim.virtualCluster(NS, 'alpha')!.setAvailable(true);
  expect((await alpha.api.core.listNamespace()).items.length).toBeGreaterThan(0);
});

it('deletes a Cluster through phase Deleting, with its virtual cluster, Secret and VCluster object', async () => {
  const alpha = await virtualClient('alpha');
  await host.custom.deleteNamespacedCustomObject({ ...CAPI, name: 'alpha' });
  const deleting = await readCluster('alpha');
  expect(deleting.metadata.deletionTimestamp).toBeDefined();
  await eventually(async () => (await readCluster('alpha')).status?.phase === 'Deleting', 'phase Deleting');
  await eventually(async () => (await statusOf(readCluster('alpha'))).code === 404, 'the Cluster gone');
  expect((await statusOf(host.core.readNamespacedSecret({ name: 'alpha-kubeconfig', namespace: NS }))).code).toBe(404);
  expect((await statusOf(host.custom.getNamespacedCustomObject({ ...VCLUSTER, name: 'alpha' }))).code).toBe(404);
  expect(sim.virtualCluster(NS, 'alpha')).toBeUndefined();
  expect((await statusOf(alpha.api.core.listNamespace())).code).toBe(404);
});

it('sends a Cluster annotated kube-sim.cloudops.dev/fail to phase Failed', async () => {
  await host.custom.createNamespacedCustomObject({ ...CAPI, body: clusterManifest('gamma', 'VCluster', { 'kube-sim.cloudops.dev/fail': 'true' }) });
  const failed = await eventually(async () => {
    const c = await readCluster('gamma');
    return c.status?.phase === 'Failed' ? c : undefined;
  }, 'phase Failed');
  expect(failed.status).toMatchObject({ infrastructureReady: false, failureReason: 'SimulatedFailure' });
  expect(failed.status?.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'False' })]));
  expect(sim.virtualCluster(NS, 'gamma')).toBeUndefined();
  expect((await statusOf(host.core.readNamespacedSecret({ name: 'gamma-kubeconfig', namespace: NS }))).code).toBe(404);
});

it('provisions a DockerCluster-backed Cluster without a virtual cluster', async () => {
  await host.custom.createNamespacedCustomObject({
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    namespace: NS,
    plural: 'dockerclusters',
    body: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'DockerCluster', metadata: { name: 'hostcl' }, spec: {} },
  });
  await host.custom.createNamespacedCustomObject({ ...CAPI, body: clusterManifest('hostcl', 'DockerCluster') });
  await provisioned('hostcl');
  const docker = (await host.custom.getNamespacedCustomObject({ group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', namespace: NS, plural: 'dockerclusters', name: 'hostcl' })) as {
    status: { ready: boolean };
  };
  expect(docker.status.ready).toBe(true);
  expect(sim.virtualCluster(NS, 'hostcl')).toBeUndefined();
});

it('removes the virtual clusters of a deleted namespace', async () => {
  await host.core.createNamespace({ body: { metadata: { name: 'short-lived' } } });
  await host.custom.createNamespacedCustomObject({ ...CAPI, namespace: 'short-lived', body: clusterManifest('tmp') });
  await eventually(() => sim.virtualCluster('short-lived', 'tmp'), 'the virtual cluster');
  await host.core.deleteNamespace({ name: 'short-lived' });
  await eventually(() => sim.virtualCluster('short-lived', 'tmp') === undefined, 'the virtual cluster removed');
});

it('stores Flux Kustomizations and PlatformApps with their status', async () => {
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const ks = { group: 'kustomize.toolkit.fluxcd.io', version: 'v1', namespace: NS, plural: 'kustomizations' };
  await host.custom.createNamespacedCustomObject({
    ...ks,
    body: { apiVersion: 'kustomize.toolkit.fluxcd.io/v1', kind: 'Kustomization', metadata: { name: 'apps' }, spec: { interval: '1m', path: './apps', prune: true, sourceRef: { kind: 'GitRepository', name: 'fleet' } } },
  });
  const patched = (await host.custom.patchNamespacedCustomObjectStatus({ ...ks, name: 'apps', body: { status: { lastAppliedRevision: 'main@sha1:abc' } } }, merge)) as { status: { lastAppliedRevision: string } };
  expect(patched.status.lastAppliedRevision).toBe('main@sha1:abc');
  const pa = { group: 'platform.cloudops.dev', version: 'v1alpha1', namespace: NS, plural: 'platformapps' };
  await host.custom.createNamespacedCustomObject({ ...pa, body: { apiVersion: 'platform.cloudops.dev/v1alpha1', kind: 'PlatformApp', metadata: { name: 'shop' }, spec: { cluster: 'beta' } } });
  const list = (await host.custom.listNamespacedCustomObject({ ...pa })) as { items: { metadata: { name: string } }[] };
  expect(list.items.map((i) => i.metadata.name)).toEqual(['shop']);
});
