/**
 * kube-sim across a restart of the local profile: a snapshot of the host and its virtual
 * clusters, written as JSON, starts a new kube-sim (on another port) where the platform's objects
 * are as they were: same uids, Cluster API clusters still Provisioned, kubeconfig Secrets that
 * work (same token, new address), Deployments keeping their ReplicaSet revisions, pods running again.
 */
import { KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { isKubeSimSnapshot, startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { clients, deploymentManifest, eventually, type Clients } from './support.js';

const NS = 'tenants';
const CAPI = { group: 'cluster.x-k8s.io', version: 'v1beta1', namespace: NS, plural: 'clusters' };
const VCLUSTER = { group: 'infrastructure.cluster.x-k8s.io', version: 'v1alpha1', namespace: NS, plural: 'vclusters' };
const OPTIONS = { podReadyDelayMs: 0, clusterPhaseDelayMs: 20, nodes: 1 };
const sims: KubeSim[] = [];

afterAll(async () => {
  await Promise.all(sims.map((s) => s.stop()));
});

async function virtualClient(host: Clients): Promise<{ api: Clients; server: string; token: string }> {
  const secret = await host.core.readNamespacedSecret({ name: 'alpha-kubeconfig', namespace: NS });
  const kc = new KubeConfig();
  kc.loadFromString(Buffer.from(secret.data!.value!, 'base64').toString('utf8'));
  return { api: clients(kc), server: kc.getCurrentCluster()!.server, token: kc.getCurrentUser()!.token! };
}

const revisions = async (api: Clients) =>
  (await api.apps.listNamespacedReplicaSet({ namespace: 'default' })).items.map((rs) => `${rs.metadata!.name}@${rs.metadata!.annotations!['deployment.kubernetes.io/revision']}`).sort();

it('restores the host and its virtual clusters from a snapshot, as they were', async () => {
  const first = await startKubeSim(OPTIONS);
  sims.push(first);
  const host = clients(first.kubeConfig());
  await host.core.createNamespace({ body: { metadata: { name: NS } } });
  const settings = await host.core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'settings' }, data: { colour: 'blue' } } });
  await host.custom.createNamespacedCustomObject({ ...VCLUSTER, body: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: 'VCluster', metadata: { name: 'alpha' }, spec: {} } });
  await host.custom.createNamespacedCustomObject({
    ...CAPI,
    body: {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: 'alpha' },
      spec: { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1', kind: 'VCluster', name: 'alpha' } },
    },
  });
  await eventually(async () => ((await host.custom.getNamespacedCustomObject({ ...CAPI, name: 'alpha' })) as { status?: { phase?: string } }).status?.phase === 'Provisioned', 'alpha Provisioned');
  const before = await virtualClient(host);
  await before.api.apps.createNamespacedDeployment({ namespace: 'default', body: deploymentManifest('shop', 'default', { replicas: 2, image: 'shop:1' }) });
  await eventually(async () => (await before.api.apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' })).status?.readyReplicas === 2, 'shop ready');
  await before.api.apps.patchNamespacedDeployment(
    { name: 'shop', namespace: 'default', body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'shop:2' }] } } } } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
  await eventually(async () => (await revisions(before.api)).length === 2 && (await before.api.apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' })).status?.updatedReplicas === 2, 'revision 2 rolled out');
  const revisionsBefore = await revisions(before.api);
  const shopUid = (await before.api.apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' })).metadata!.uid;

  // As the launcher does: through JSON, to a file and back.
  const saved: unknown = JSON.parse(JSON.stringify(first.snapshot()));
  expect(isKubeSimSnapshot(saved)).toBe(true);
  if (!isKubeSimSnapshot(saved)) return;
  expect(saved.host.objects.some((o) => o.storageKey === 'pods')).toBe(false);
  await first.stop();

  const second = await startKubeSim({ ...OPTIONS, state: saved });
  sims.push(second);
  expect(second.url).not.toBe(first.url);
  const host2 = clients(second.kubeConfig());
  expect((await host2.core.readNamespacedConfigMap({ name: 'settings', namespace: NS })).metadata!.uid).toBe(settings.metadata!.uid);

  // The Cluster stays Provisioned: it is not provisioned again.
  const phases: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    phases.push(((await host2.custom.getNamespacedCustomObject({ ...CAPI, name: 'alpha' })) as { status: { phase: string } }).status.phase);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(new Set(phases)).toEqual(new Set(['Provisioned']));

  // Its kubeconfig Secret points at the new address, with the token handed out before.
  const after = await eventually(async () => {
    const v = await virtualClient(host2);
    return v.server.startsWith(second.url) && v;
  }, 'kubeconfig Secret rewritten for the new address');
  expect(after.token).toBe(before.token);
  const shop = await after.api.apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' });
  expect(shop.metadata!.uid).toBe(shopUid);
  expect(shop.spec!.template.spec!.containers[0]!.image).toBe('shop:2');

  // Same ReplicaSets and revisions (no new one), and the current one's pods run again.
  await eventually(async () => (await after.api.apps.readNamespacedDeployment({ name: 'shop', namespace: 'default' })).status?.readyReplicas === 2, 'shop ready again');
  expect(await revisions(after.api)).toEqual(revisionsBefore);
  const pods = (await after.api.core.listNamespacedPod({ namespace: 'default' })).items;
  expect(pods.map((p) => p.spec!.containers[0]!.image)).toEqual(['shop:2', 'shop:2']);
});

it('refuses what is not a snapshot of this version', () => {
  expect(isKubeSimSnapshot({ version: 2, host: { objects: [] }, virtualClusters: [] })).toBe(false);
  expect(isKubeSimSnapshot(null)).toBe(false);
  expect(isKubeSimSnapshot({ version: 1, host: {}, virtualClusters: [] })).toBe(false);
});
