/**
 * The local HTTPS ingress against kube-sim virtual clusters, end to end with the fleet repository
 * and the local applier: 200 for a ready app (TLS chain verified with the ingress's CA and SNI =
 * the app address), 503 when no selected pod is ready, 404 for unknown hosts.
 */
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { startKubeSim, type KubeSim, type VirtualClusterHandle } from '../../kube-sim/index.js';
import { appFolder, createLocalBareRepo, openFleetRepo, type FleetRepo } from '../../subgraphs/platform/gitops/fleet-repo.js';
import { startLocalApplier, type LocalApplier } from '../../subgraphs/platform/gitops/local-applier.js';
import { createIngressCa, startLocalIngress, type IngressCluster, type LocalIngress } from '../../subgraphs/platform/gitops/local-ingress.js';
import { virtualClustersFromHost } from '../../subgraphs/platform/gitops/virtual-clusters.js';
import { appManifests, createVirtualCluster, eventually, logger, tempDir, vclients } from './support.js';

const TENANT = '7d3f1c2b-9a8e-4f6d-b5c4-a3b2c1d0e9f8';
const READY_HOST = 'web-acme.apps.cloudops.test';
const FAILING_HOST = 'broken-acme.apps.cloudops.test';
const OTHER_CLUSTER_HOST = 'shop-beta.apps.cloudops.test';

let sim: KubeSim;
let dir: string;
let cleanup: () => Promise<void>;
let repo: FleetRepo;
let applier: LocalApplier;
let ingress: LocalIngress;
let one: VirtualClusterHandle;
const agents: Agent[] = [];

/** The virtual clusters of kube-sim (a new KubeConfig per call: the ingress keys its clients by server and token). */
function simClusters(): IngressCluster[] {
  return sim.virtualClusters().map((v) => ({ namespace: v.namespace, name: v.name, kubeConfig: v.kubeConfig() }));
}

/** An HTTPS GET to the ingress as the platform's reachability check makes it: CA + SNI = address. */
async function get(address: string, path = '/', ca: string | null = ingress.caPem): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const agent = new Agent({ connect: { ca: ca ?? undefined, servername: address } });
  agents.push(agent);
  const response = await request(`${ingress.url}${path}`, { dispatcher: agent, headers: { host: address } });
  return { status: response.statusCode, body: await response.body.text(), headers: response.headers };
}

beforeAll(async () => {
  sim = await startKubeSim({ podReadyDelayMs: 0, clusterPhaseDelayMs: 20 });
  ({ dir, cleanup } = await tempDir('ingress'));
  const url = await createLocalBareRepo(join(dir, 'fleet.git'), 'main');
  repo = await openFleetRepo({ url, branch: 'main', workdir: join(dir, 'writer'), author: { name: 'app controller', email: 'ctl@cloudops.test' }, logger });
  let two: VirtualClusterHandle;
  [one, two] = await Promise.all([createVirtualCluster(sim, 'cs-acme', 'vc-main'), createVirtualCluster(sim, 'cs-beta', 'vc-shop')]);
  applier = await startLocalApplier({ repoUrl: url, branch: 'main', workdir: join(dir, 'applier'), hostKubeConfig: sim.kubeConfig(), intervalMs: 0, logger });

  await repo.writeFolder(appFolder({ tenantId: TENANT, namespace: 'cs-acme', vcluster: 'vc-main', app: 'web' }), appManifests({ app: 'web', namespace: 'apps', image: 'nginx:1.25', host: READY_HOST, replicas: 2 }), 'deploy web');
  await repo.writeFolder(appFolder({ tenantId: TENANT, namespace: 'cs-acme', vcluster: 'vc-main', app: 'broken' }), appManifests({ app: 'broken', namespace: 'apps', image: 'nginx:fail', host: FAILING_HOST }), 'deploy broken');
  await repo.writeFolder(appFolder({ tenantId: 'beta', namespace: 'cs-beta', vcluster: 'vc-shop', app: 'shop' }), appManifests({ app: 'shop', namespace: 'default', image: 'ghcr.io/beta/shop:2', host: OTHER_CLUSTER_HOST }), 'deploy shop');
  await applier.sync();
  await eventually(async () => (await vclients(one).apps.readNamespacedDeployment({ namespace: 'apps', name: 'web' })).status?.readyReplicas === 2, 'web ready');
  await eventually(async () => (await vclients(two).apps.readNamespacedDeployment({ namespace: 'default', name: 'shop' })).status?.readyReplicas === 1, 'shop ready');

  ingress = await startLocalIngress({ port: 0, host: '127.0.0.1', virtualClusters: simClusters, logger });
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await ingress?.stop();
  await applier?.stop();
  await sim?.stop();
  await cleanup?.();
});

it('answers 200 for a ready app, naming the app, the pod and the image, over TLS verified with its CA', async () => {
  expect(ingress.url).toBe(`https://127.0.0.1:${ingress.port}`);
  expect(ingress.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
  const { status, body, headers } = await get(READY_HOST);
  expect(status).toBe(200);
  expect(body).toMatch(/^app web served by pod web-[a-z0-9]+-[a-z0-9]{5} \(image nginx:1\.25\)\n$/);
  expect(headers['x-app']).toBe('web');
  // The app in the other virtual cluster too.
  const shop = await get(OTHER_CLUSTER_HOST, '/cart');
  expect(shop.status).toBe(200);
  expect(shop.body).toContain('image ghcr.io/beta/shop:2');
  expect(await ingress.resolve(OTHER_CLUSTER_HOST)).toMatchObject({ status: 200, app: 'shop', cluster: 'cs-beta/vc-shop', namespace: 'default', ingress: 'shop', service: 'shop', image: 'ghcr.io/beta/shop:2' });
});

it('presents a certificate for the SNI name, signed by its CA: refused without the CA or for another name', async () => {
  await expect(get(READY_HOST, '/', null)).rejects.toThrow(/certificate|self[- ]signed|issuer/i);
  const other = await createIngressCa('some other CA');
  await expect(get(READY_HOST, '/', other.cert)).rejects.toThrow(/certificate|issuer|verify/i);
  // The certificate names the SNI host: a client expecting another name refuses it.
  const agent = new Agent({ connect: { ca: ingress.caPem, servername: READY_HOST, checkServerIdentity: (_host, cert) => (cert.subjectaltname === `DNS:${READY_HOST}` ? undefined : new Error(`unexpected ${cert.subjectaltname}`)) } });
  agents.push(agent);
  const response = await request(`${ingress.url}/`, { dispatcher: agent, headers: { host: READY_HOST } });
  expect(response.statusCode).toBe(200);
  await response.body.text();
});

it('answers 503 when no selected pod is ready (image nginx:fail), 404 for an unknown host', async () => {
  const failing = await get(FAILING_HOST);
  expect(failing.status).toBe(503);
  expect(failing.body).toMatch(/no ready pod/);
  expect(failing.headers['retry-after']).toBe('1');
  const unknown = await get('nobody.apps.cloudops.test');
  expect(unknown.status).toBe(404);
  expect((await ingress.resolve('NOBODY.apps.cloudops.test:443')).status).toBe(404);
});

it('follows changes within a second: scaled to zero answers 503, back up answers 200', async () => {
  const api = vclients(one);
  await api.apps.patchNamespacedDeploymentScale(
    { namespace: 'apps', name: 'web', body: { spec: { replicas: 0 } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await eventually(async () => (await get(READY_HOST)).status === 503, '503 after scaling to 0', 5000);
  await api.apps.patchNamespacedDeploymentScale(
    { namespace: 'apps', name: 'web', body: { spec: { replicas: 2 } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  await eventually(async () => (await get(READY_HOST)).status === 200, '200 after scaling back', 5000);
});

it('a removed app disappears from the ingress (404) once the applier pruned it', async () => {
  await repo.removeFolder(appFolder({ tenantId: 'beta', namespace: 'cs-beta', vcluster: 'vc-shop', app: 'shop' }), 'remove shop');
  await applier.sync();
  await eventually(async () => (await get(OTHER_CLUSTER_HOST)).status === 404, '404 after removal', 5000);
});

it('takes load: many concurrent requests on one connection pool, all answered from the cache', async () => {
  const agent = new Agent({ connect: { ca: ingress.caPem, servername: READY_HOST }, connections: 8 });
  agents.push(agent);
  const started = Date.now();
  const statuses = await Promise.all(
    Array.from({ length: 300 }, async () => {
      const response = await request(`${ingress.url}/`, { dispatcher: agent, headers: { host: READY_HOST } });
      await response.body.text();
      return response.statusCode;
    }),
  );
  expect(statuses.every((s) => s === 200)).toBe(true);
  expect(Date.now() - started).toBeLessThan(10_000);
});

it('works with the host-side resolver (kubeconfig Secrets) and a CA it is given', async () => {
  const ca = await createIngressCa();
  const second = await startLocalIngress({ port: 0, virtualClusters: virtualClustersFromHost(sim.kubeConfig()), logger, ca });
  try {
    expect(second.caPem).toBe(ca.cert);
    const agent = new Agent({ connect: { ca: ca.cert, servername: READY_HOST } });
    agents.push(agent);
    const response = await request(`${second.url}/`, { dispatcher: agent, headers: { host: READY_HOST } });
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toContain('app web');
    expect(await second.resolve(FAILING_HOST)).toMatchObject({ status: 503, app: 'broken', cluster: 'cs-acme/vc-main', service: 'broken' });
  } finally {
    await second.stop();
  }
});
