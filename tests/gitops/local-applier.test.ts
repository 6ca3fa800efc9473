/**
 * The local applier (Flux stand-in) against kube-sim: fleet folders applied to the right virtual
 * cluster, the Kustomization it records, pruning, ReplicaSet revisions on an image change,
 * failures confined to their folder, unreachable clusters retried.
 */
import { join } from 'node:path';
import type { V1Deployment } from '@kubernetes/client-node';
import { startKubeSim, type KubeSim, type VirtualClusterHandle } from '../../kube-sim/index.js';
import { appFolder, createLocalBareRepo, openFleetRepo, vclusterFolder, type FleetRepo } from '../../subgraphs/platform/gitops/fleet-repo.js';
import { appliedRevision, FIELD_MANAGER, KUSTOMIZATION, startLocalApplier, type LocalApplier } from '../../subgraphs/platform/gitops/local-applier.js';
import { isNotFound, type KubeClients } from '../../subgraphs/platform/orchestrator/kube.js';
import { appManifests, createVirtualCluster, eventually, logger, tempDir, vclients } from './support.js';

const TENANT_A = '0f6c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
const TENANT_B = 'b-tenant';

let sim: KubeSim;
let dir: string;
let cleanup: () => Promise<void>;
let url: string;
let repo: FleetRepo;
let applier: LocalApplier;
let one: VirtualClusterHandle; // cs-alpha/vc-one, tenant A
let two: VirtualClusterHandle; // cs-beta/vc-two, tenant B
let oneApi: KubeClients;
let twoApi: KubeClients;

const webFolder = () => appFolder({ tenantId: TENANT_A, namespace: 'cs-alpha', vcluster: 'vc-one', app: 'web' });
const apiFolder = () => appFolder({ tenantId: TENANT_A, namespace: 'cs-alpha', vcluster: 'vc-one', app: 'api' });
const shopFolder = () => appFolder({ tenantId: TENANT_B, namespace: 'cs-beta', vcluster: 'vc-two', app: 'shop' });

async function readDeployment(api: KubeClients, namespace: string, name: string): Promise<V1Deployment | undefined> {
  try {
    return await api.apps.readNamespacedDeployment({ namespace, name });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

beforeAll(async () => {
  sim = await startKubeSim({ podReadyDelayMs: 0, clusterPhaseDelayMs: 20 });
  ({ dir, cleanup } = await tempDir('applier'));
  url = await createLocalBareRepo(join(dir, 'fleet.git'), 'main');
  repo = await openFleetRepo({ url, branch: 'main', workdir: join(dir, 'writer'), author: { name: 'app controller', email: 'ctl@cloudops.test' }, logger });
  [one, two] = await Promise.all([createVirtualCluster(sim, 'cs-alpha', 'vc-one'), createVirtualCluster(sim, 'cs-beta', 'vc-two')]);
  oneApi = vclients(one);
  twoApi = vclients(two);
  applier = await startLocalApplier({ repoUrl: url, branch: 'main', workdir: join(dir, 'applier'), hostKubeConfig: sim.kubeConfig(), intervalMs: 0, logger });
});

afterAll(async () => {
  await applier?.stop();
  await sim?.stop();
  await cleanup?.();
});

it('applies an app folder (Deployment, Service, Ingress) into its own virtual cluster, creating the namespace', async () => {
  const { commit } = await repo.writeFolder(webFolder(), appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.25', host: 'web.apps.test' }), 'deploy web');
  const applied = await applier.sync();
  expect(applied).toBe(commit);
  expect(applied).toBe(await repo.head());

  const deployment = await readDeployment(oneApi, 'apps', 'web');
  expect(deployment?.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.25');
  expect(deployment?.metadata?.labels).toMatchObject({ 'kustomize.toolkit.fluxcd.io/name': 'fleet', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system', 'app.kubernetes.io/name': 'web' });
  const service = await oneApi.core.readNamespacedService({ namespace: 'apps', name: 'web' });
  expect(service.metadata?.labels?.['kustomize.toolkit.fluxcd.io/name']).toBe('fleet');
  const ingress = await oneApi.networking.readNamespacedIngress({ namespace: 'apps', name: 'web' });
  expect(ingress.spec?.rules?.[0]?.host).toBe('web.apps.test');
  // Only in vc-one: the other virtual cluster has nothing of it.
  expect(await readDeployment(twoApi, 'apps', 'web')).toBeUndefined();
  await expect(twoApi.core.readNamespace({ name: 'apps' })).rejects.toMatchObject({ code: 404 });
  // And the Deployment rolls out in kube-sim.
  await eventually(async () => (await readDeployment(oneApi, 'apps', 'web'))?.status?.readyReplicas === 1, 'web ready');
});

it('records the applied revision in the Kustomization flux-system/fleet, through its status', async () => {
  const head = await repo.head();
  const kustomization = (await oneApi.custom.getNamespacedCustomObject({ ...KUSTOMIZATION })) as {
    apiVersion: string;
    spec: { path: string; prune: boolean; sourceRef: { kind: string; name: string } };
    status: { lastAppliedRevision: string; lastAttemptedRevision: string; conditions: { type: string; status: string; reason: string; message: string }[]; inventory: { entries: { id: string; v: string }[] } };
  };
  expect(kustomization.apiVersion).toBe('kustomize.toolkit.fluxcd.io/v1');
  expect(kustomization.spec).toMatchObject({ path: `./${vclusterFolder({ tenantId: TENANT_A, namespace: 'cs-alpha', vcluster: 'vc-one' })}`, prune: true, sourceRef: { kind: 'GitRepository', name: 'fleet' } });
  expect(kustomization.status.lastAppliedRevision).toBe(`main@sha1:${head}`);
  expect(kustomization.status.lastAttemptedRevision).toBe(`main@sha1:${head}`);
  expect(kustomization.status.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', reason: 'ReconciliationSucceeded', message: `Applied revision: main@sha1:${head}` })]);
  expect(kustomization.status.inventory.entries.map((e) => e.id).sort()).toEqual(['apps_web__Service', 'apps_web_apps_Deployment', 'apps_web_networking.k8s.io_Ingress'].sort());

  expect(await appliedRevision(oneApi)).toEqual({
    sha: head,
    revision: `main@sha1:${head}`,
    ready: true,
    message: `Applied revision: main@sha1:${head}`,
    lastAttemptedRevision: undefined,
    path: `./${vclusterFolder({ tenantId: TENANT_A, namespace: 'cs-alpha', vcluster: 'vc-one' })}`,
  });
  // A virtual cluster with no folder has no Kustomization.
  expect(await appliedRevision(twoApi)).toBeUndefined();
});

it('an image change in Git gives a new ReplicaSet revision in the virtual cluster', async () => {
  await repo.writeFolder(webFolder(), appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.27', host: 'web.apps.test' }), 'web: nginx 1.27');
  await applier.sync();
  const deployment = await readDeployment(oneApi, 'apps', 'web');
  expect(deployment?.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.27');
  const sets = await eventually(async () => {
    const list = await oneApi.apps.listNamespacedReplicaSet({ namespace: 'apps', labelSelector: 'app.kubernetes.io/name=web' });
    return list.items.length === 2 ? list.items : undefined;
  }, 'two ReplicaSets');
  const byRevision = Object.fromEntries(sets.map((rs) => [rs.metadata?.annotations?.['deployment.kubernetes.io/revision'], rs.spec?.template?.spec?.containers[0]?.image]));
  expect(byRevision).toEqual({ '1': 'nginx:1.25', '2': 'nginx:1.27' });
  expect((await appliedRevision(oneApi))?.sha).toBe(await repo.head());
});

it('prunes an app whose folder was removed, and keeps the others', async () => {
  await repo.writeFolder(apiFolder(), appManifests({ app: 'api', namespace: 'apps', image: 'ghcr.io/acme/api:1', host: 'api.apps.test' }), 'deploy api');
  await applier.sync();
  expect(await readDeployment(oneApi, 'apps', 'api')).toBeDefined();

  const { commit } = await repo.removeFolder(apiFolder(), 'remove api');
  expect(await applier.sync()).toBe(commit);
  expect(await readDeployment(oneApi, 'apps', 'api')).toBeUndefined();
  await expect(oneApi.core.readNamespacedService({ namespace: 'apps', name: 'api' })).rejects.toMatchObject({ code: 404 });
  await expect(oneApi.networking.readNamespacedIngress({ namespace: 'apps', name: 'api' })).rejects.toMatchObject({ code: 404 });
  expect(await readDeployment(oneApi, 'apps', 'web')).toBeDefined();
  expect(applier.lastPass?.clusters.find((c) => c.vcluster === 'vc-one')).toMatchObject({ outcome: 'applied', pruned: 3 });
  expect((await appliedRevision(oneApi))?.sha).toBe(commit);
});

it('never prunes an object it did not apply', async () => {
  await oneApi.core.createNamespacedConfigMap({ namespace: 'apps', body: { metadata: { name: 'hand-made' }, data: { a: '1' } } });
  await repo.writeFolder(apiFolder(), { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api-config, namespace: apps}\ndata: {x: "1"}\n' }, 'api config');
  await applier.sync();
  await repo.removeFolder(apiFolder(), 'remove api config');
  await applier.sync();
  await expect(oneApi.core.readNamespacedConfigMap({ namespace: 'apps', name: 'api-config' })).rejects.toMatchObject({ code: 404 });
  expect((await oneApi.core.readNamespacedConfigMap({ namespace: 'apps', name: 'hand-made' })).data).toEqual({ a: '1' });
});

it('moves lastAppliedRevision of every virtual cluster to the new head, even when only another folder changed', async () => {
  const { commit } = await repo.writeFolder(shopFolder(), appManifests({ app: 'shop', namespace: 'default', image: 'nginx:1.25', host: 'shop.apps.test' }), 'deploy shop');
  expect(await applier.sync()).toBe(commit);
  expect(await readDeployment(twoApi, 'default', 'shop')).toBeDefined();
  expect(await readDeployment(oneApi, 'default', 'shop')).toBeUndefined();
  expect((await appliedRevision(twoApi))?.sha).toBe(commit);
  expect((await appliedRevision(oneApi))?.sha).toBe(commit);
  const outcomes = Object.fromEntries(applier.lastPass!.clusters.map((c) => [c.vcluster, c.outcome]));
  expect(outcomes).toEqual({ 'vc-one': 'status', 'vc-two': 'applied' });
});

it('keeps going when one virtual cluster is unreachable, and catches up once it is back', async () => {
  two.setAvailable(false);
  try {
    await repo.writeFolder(shopFolder(), appManifests({ app: 'shop', namespace: 'default', image: 'nginx:1.26', host: 'shop.apps.test' }), 'shop: 1.26');
    const { commit } = await repo.writeFolder(webFolder(), appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.28', host: 'web.apps.test' }), 'web: 1.28');
    expect(await applier.sync()).toBe(commit);
    expect((await readDeployment(oneApi, 'apps', 'web'))?.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.28');
    expect((await appliedRevision(oneApi))?.sha).toBe(commit);
    const failed = applier.lastPass!.clusters.find((c) => c.vcluster === 'vc-two');
    expect(failed).toMatchObject({ outcome: 'failed' });
    expect(failed?.error).toMatch(/503|unavailable/i);
  } finally {
    two.setAvailable(true);
  }
  const head = await applier.sync();
  expect((await readDeployment(twoApi, 'default', 'shop'))?.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.26');
  expect((await appliedRevision(twoApi))?.sha).toBe(head);
});

it('a broken folder fails alone: Ready=False with the error, lastAppliedRevision kept, the other clusters applied', async () => {
  const before = (await appliedRevision(twoApi))!.sha;
  await repo.writeFolder(shopFolder(), { ...appManifests({ app: 'shop', namespace: 'default', image: 'nginx:1.26', host: 'shop.apps.test' }), 'broken.yaml': 'kind: [unclosed\n' }, 'break shop');
  const { commit } = await repo.writeFolder(webFolder(), appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.29', host: 'web.apps.test' }), 'web: 1.29');
  await applier.sync();
  const broken = await appliedRevision(twoApi);
  expect(broken).toMatchObject({ sha: before, ready: false, lastAttemptedRevision: `main@sha1:${commit}` });
  expect(broken?.message).toMatch(/broken\.yaml/);
  expect((await appliedRevision(oneApi))).toMatchObject({ sha: commit, ready: true });
  expect((await readDeployment(oneApi, 'apps', 'web'))?.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.29');

  // A kind the cluster does not serve is reported too, and nothing is pruned meanwhile.
  await repo.writeFolder(shopFolder(), { ...appManifests({ app: 'shop', namespace: 'default', image: 'nginx:1.26', host: 'shop.apps.test' }), 'odd.yaml': 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n' }, 'odd kind');
  await applier.sync();
  expect((await appliedRevision(twoApi))?.message).toMatch(/Widget .*not served/);
  expect(await readDeployment(twoApi, 'default', 'shop')).toBeDefined();

  const fixed = await repo.writeFolder(shopFolder(), appManifests({ app: 'shop', namespace: 'default', image: 'nginx:1.26', host: 'shop.apps.test' }), 'fix shop');
  await applier.sync();
  expect(await appliedRevision(twoApi)).toMatchObject({ sha: fixed.commit, ready: true, lastAttemptedRevision: undefined });
});

it('a folder for a virtual cluster that does not exist yet fails alone and is applied once it exists', async () => {
  const folder = appFolder({ tenantId: TENANT_B, namespace: 'cs-gamma', vcluster: 'vc-three', app: 'late' });
  const { commit } = await repo.writeFolder(folder, appManifests({ app: 'late', namespace: 'default', image: 'nginx:1.25', host: 'late.apps.test' }), 'deploy late');
  expect(await applier.sync()).toBe(commit);
  expect(applier.lastPass!.clusters.find((c) => c.vcluster === 'vc-three')).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/not ready yet/) });
  expect((await appliedRevision(oneApi))?.sha).toBe(commit);

  const three = await createVirtualCluster(sim, 'cs-gamma', 'vc-three');
  await applier.sync();
  expect(await readDeployment(vclients(three), 'default', 'late')).toBeDefined();
  expect((await appliedRevision(vclients(three)))?.sha).toBe(commit);
});

it('server-side applies as flux-local: a field removed in Git is removed in the cluster', async () => {
  const files = appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.29', host: 'web.apps.test' });
  const withEnv = files['deployment.yaml']!.replace('          ports:', '          env:\n            - name: MODE\n              value: fast\n          ports:');
  await repo.writeFolder(webFolder(), { ...files, 'deployment.yaml': withEnv }, 'web: env');
  await applier.sync();
  expect((await readDeployment(oneApi, 'apps', 'web'))?.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'MODE', value: 'fast' }]);
  await repo.writeFolder(webFolder(), files, 'web: no env');
  await applier.sync();
  expect((await readDeployment(oneApi, 'apps', 'web'))?.spec?.template.spec?.containers[0]?.env).toBeUndefined();
  expect(FIELD_MANAGER).toBe('flux-local');
});

it('polls on its own, and a restarted applier prunes a virtual cluster whose whole folder is gone', async () => {
  await applier.stop();
  const polling = await startLocalApplier({ repoUrl: url, branch: 'main', workdir: join(dir, 'applier-2'), hostKubeConfig: sim.kubeConfig(), intervalMs: 50, logger });
  try {
    const { commit } = await repo.writeFolder(webFolder(), appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.30', host: 'web.apps.test' }), 'web: 1.30');
    await eventually(async () => (await appliedRevision(oneApi))?.sha === commit, 'the polling applier to apply the new head');
    expect((await readDeployment(oneApi, 'apps', 'web'))?.spec?.template.spec?.containers[0]?.image).toBe('nginx:1.30');

    // The whole vc-two folder goes; this applier never saw it, yet finds it through the host.
    const removed = await repo.removeFolder(vclusterFolder({ tenantId: TENANT_B, namespace: 'cs-beta', vcluster: 'vc-two' }), 'remove every app of vc-two');
    await eventually(async () => (await appliedRevision(twoApi))?.sha === removed.commit, 'vc-two revision');
    expect(await readDeployment(twoApi, 'default', 'shop')).toBeUndefined();
    expect(await readDeployment(oneApi, 'apps', 'web')).toBeDefined();
  } finally {
    await polling.stop();
  }
});
