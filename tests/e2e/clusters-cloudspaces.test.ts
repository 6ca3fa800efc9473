import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { expectError, httpClient } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually, outboxPayloads } from '../helpers/wait.js';

const TENANT_A = '3a000000-0000-4000-8000-00000000003a';
const TENANT_B = '3b000000-0000-4000-8000-00000000003b';

let stack: Stack;
let sim: KubeSim;
let other: KubeSim;
let dir: string;
let admin: string;
let alice: string;
let aliceAdmin: string;
let bob: string;
const call = httpClient(() => stack.base);

/** A stand-in for workflow-manager: records the notices; down (503) while `down` is set. */
const notices: { event: string; action: string; cluster: { id: string; name: string } }[] = [];
let down = 0;
let workflowManager: Server;


const outbox = (routingKey: string) => outboxPayloads(stack.database.url, routingKey);

beforeAll(async () => {
  // Phases last long enough that polling every quarter second sees each of them.
  sim = await startKubeSim({ podReadyDelayMs: 0, clusterPhaseDelayMs: 600 });
  other = await startKubeSim({ podReadyDelayMs: 0, clusterPhaseDelayMs: 100, nodes: 2 });
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  writeFileSync(join(dir, 'host'), sim.kubeconfig);
  workflowManager = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (down > 0 || !req.headers.authorization?.startsWith('Bearer ')) {
        down -= 1;
        res.writeHead(503).end();
        return;
      }
      notices.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => workflowManager.listen(0, '127.0.0.1', resolve));
  stack = await startStack('e2e_clusters', {}, { KUBECONFIG: join(dir, 'host'), WORKFLOW_MANAGER_URL: `http://127.0.0.1:${(workflowManager.address() as AddressInfo).port}` });
  admin = await stack.token({ subject: 'root', tenantId: null, roles: ['super_admin'], scopes: ['read', 'deploy', 'admin'] });
  alice = await stack.token({ subject: 'alice', tenantId: TENANT_A, scopes: ['read', 'deploy'] });
  aliceAdmin = await stack.token({ subject: 'alice-admin', tenantId: TENANT_A, roles: ['admin'], scopes: ['read', 'deploy', 'admin'] });
  bob = await stack.token({ subject: 'bob', tenantId: TENANT_B, roles: ['admin'], scopes: ['read', 'deploy', 'admin'] });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await sim?.stop();
  await other?.stop();
  workflowManager?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('clusters', () => {
  it('registers the management cluster once, for platform administrators only', async () => {
    expectError(await call('POST', '/platform/api/v1/clusters/register-self', { token: aliceAdmin, body: {} }), 403, 'forbidden');
    const first = await call('POST', '/platform/api/v1/clusters/register-self', { token: admin, body: {} });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ name: 'management', source: 'self', phase: 'Provisioned', tenant_id: null });
    const again = await call('POST', '/platform/api/v1/clusters/register-self', { token: admin, body: {} });
    expect(again.json.id).toBe(first.json.id);
    const detail = await call('GET', `/platform/api/v1/clusters/${first.json.id}`, { token: admin });
    expect(detail.json.nodes).toEqual({ total: 3, ready: 3 });
    await eventually(async () => notices.find((n) => n.cluster.id === first.json.id && n.action === 'registered'), 'workflow-manager notice');
  });

  it('connects an existing cluster with its kubeconfig, stored sealed, with live node counts', async () => {
    const r = await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'edge-1', kubeconfig: other.kubeconfig } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: 'edge-1', source: 'connected', phase: 'Provisioned', tenant_id: TENANT_B });
    expect(r.json).not.toHaveProperty('kubeconfig');
    expect(JSON.stringify(r.json)).not.toContain(other.url);
    const detail = await call('GET', `/platform/api/v1/clusters/${r.json.id}`, { token: bob });
    expect(detail.json.nodes).toEqual({ total: 2, ready: 2 });
    expectError(await call('GET', `/platform/api/v1/clusters/${r.json.id}`, { token: alice }), 404, 'not_found');
    expectError(await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'edge-1', kubeconfig: other.kubeconfig } }), 409, 'conflict');
    const db = new pg.Client({ connectionString: stack.database.url });
    await db.connect();
    const { rows } = await db.query('select kubeconfig_sealed from platform.cluster where id = $1', [r.json.id]);
    await db.end();
    expect(rows[0].kubeconfig_sealed).toMatch(/^v1\./);
    expect(rows[0].kubeconfig_sealed).not.toContain('server');
    // Disconnect: forgotten at once, workflow-manager told.
    const gone = await call('DELETE', `/platform/api/v1/clusters/${r.json.id}`, { token: bob });
    expect(gone.status).toBe(202);
    expectError(await call('GET', `/platform/api/v1/clusters/${r.json.id}`, { token: bob }), 404, 'not_found');
    await eventually(async () => notices.find((n) => n.cluster.id === r.json.id && n.action === 'removed'), 'removal notice');
    expect(notices.find((n) => n.cluster.id === r.json.id && n.action === 'connected')).toBeDefined();
  });

  it('refuses bad cluster input', async () => {
    expectError(await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'Not A Label', kubeconfig: other.kubeconfig } }), 400, 'validation_failed');
    expectError(await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'x', kubeconfig: 'this is not yaml: [' } }), 400, 'validation_failed');
    const unreachable = other.kubeconfig.replace(/server: .*/, 'server: http://127.0.0.1:9');
    const r = await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'nowhere', kubeconfig: unreachable } });
    expectError(r, 400, 'validation_failed');
    expect(r.json.error.message).toMatch(/did not answer/);
    expectError(await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'x', infrastructure_kind: 'MoonCluster' } }), 400, 'validation_failed');
    expectError(await call('POST', '/platform/api/v1/clusters', { token: alice, body: { name: 'x' } }), 403, 'forbidden');
    expectError(await call('GET', '/platform/api/v1/clusters/not-a-uuid', { token: bob }), 404, 'not_found');
  });

  it('creates a cluster through Cluster API and follows its phases, emitting each, then deletes it', async () => {
    const r = await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'capi-1', worker_nodes: 2 } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ source: 'cluster_api', phase: 'Pending', infrastructure_kind: 'DockerCluster' });
    await eventually(async () => (await call('GET', `/platform/api/v1/clusters/${r.json.id}`, { token: bob })).json.phase === 'Provisioned', 'Provisioned');
    const phases = (await outbox('cluster.phase_changed')).filter((e) => e.data.cluster_id === r.json.id).map((e) => e.data.phase);
    expect(phases).toEqual(['Pending', 'Provisioning', 'Provisioned']);
    const deleting = await call('DELETE', `/platform/api/v1/clusters/${r.json.id}`, { token: bob });
    expect(deleting.json.phase).toBe('Deleting');
    await eventually(async () => (await call('GET', `/platform/api/v1/clusters/${r.json.id}`, { token: bob })).status === 404, 'cluster gone');
    await eventually(async () => notices.find((n) => n.cluster.id === r.json.id && n.action === 'removed'), 'removal notice');
  });

  it('keeps telling workflow-manager while it is down', async () => {
    down = 2;
    const r = await call('POST', '/platform/api/v1/clusters', { token: bob, body: { name: 'edge-2', kubeconfig: other.kubeconfig } });
    expect(r.status).toBe(201);
    await eventually(async () => notices.find((n) => n.cluster.id === r.json.id && n.action === 'connected'), 'notice after the outage');
    expect(down).toBeLessThanOrEqual(0);
  });
});

describe('CloudSpaces', () => {
  let spaceId: string;

  it('provisions a CloudSpace: namespace, quota and a default virtual cluster, then Ready and cloudspace.ready', async () => {
    const r = await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'shop', cpu_limit: '2', memory_limit: '4Gi', pod_limit: 20 } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: 'shop', status: 'Pending', tenant_id: TENANT_A, default_vcluster: 'main' });
    spaceId = r.json.id;
    const ready = await eventually(async () => {
      const s = await call('GET', `/platform/api/v1/cloudspaces/${spaceId}`, { token: alice });
      return s.json.status === 'Ready' && s.json;
    }, 'Ready');
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    const quota = await core.readNamespacedResourceQuota({ namespace: ready.namespace, name: 'cloudspace-quota' });
    expect(quota.spec?.hard).toEqual({ 'requests.cpu': '2', 'requests.memory': '4Gi', pods: '20' });
    const events = (await outbox('cloudspace.ready')).filter((e) => e.data.cloudspace_id === spaceId);
    expect(events).toEqual([expect.objectContaining({ tenant_id: TENANT_A, data: expect.objectContaining({ cloudspace_name: 'shop', vclusters: ['main'] }) })]);
  });

  it('lists virtual clusters and hands out a working kubeconfig to deploy-scoped callers', async () => {
    const list = await call('GET', `/platform/api/v1/cloudspaces/${spaceId}/vclusters`, { token: alice });
    expect(list.json).toEqual([expect.objectContaining({ name: 'main', phase: 'Provisioned', ready: true, is_default: true })]);
    const reader = await stack.token({ subject: 'reader', tenantId: TENANT_A, scopes: ['read'] });
    expectError(await call('GET', `/platform/api/v1/cloudspaces/${spaceId}/vclusters/main/kubeconfig`, { token: reader }), 403, 'forbidden');
    const kc = await call('GET', `/platform/api/v1/cloudspaces/${spaceId}/vclusters/main/kubeconfig`, { token: alice });
    expect(kc.status).toBe(200);
    expect(kc.headers.get('cache-control')).toBe('no-store');
    const config = new KubeConfig();
    config.loadFromString(kc.json.kubeconfig);
    const namespaces = await config.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('default');
  });

  it('adds and deletes a virtual cluster, but not the default one', async () => {
    const added = await call('POST', `/platform/api/v1/cloudspaces/${spaceId}/vclusters`, { token: alice, body: { name: 'staging' } });
    expect(added.status).toBe(201);
    await eventually(async () => (await call('GET', `/platform/api/v1/cloudspaces/${spaceId}/vclusters/staging`, { token: alice })).json.ready, 'staging ready');
    expectError(await call('POST', `/platform/api/v1/cloudspaces/${spaceId}/vclusters`, { token: alice, body: { name: 'staging' } }), 409, 'conflict');
    expectError(await call('DELETE', `/platform/api/v1/cloudspaces/${spaceId}/vclusters/main`, { token: alice }), 409, 'conflict');
    expect((await call('DELETE', `/platform/api/v1/cloudspaces/${spaceId}/vclusters/staging`, { token: alice })).status).toBe(204);
    await eventually(async () => (await call('GET', `/platform/api/v1/cloudspaces/${spaceId}/vclusters/staging`, { token: alice })).status === 404, 'staging gone');
  });

  it('renames and resizes, the quota changing at once', async () => {
    const r = await call('PATCH', `/platform/api/v1/cloudspaces/${spaceId}`, { token: alice, body: { name: 'shop-eu', cpu_limit: '3' } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ name: 'shop-eu', cpu_limit: '3', memory_limit: '4Gi' });
    const quota = await sim.kubeConfig().makeApiClient(CoreV1Api).readNamespacedResourceQuota({ namespace: r.json.namespace, name: 'cloudspace-quota' });
    expect(quota.spec?.hard?.['requests.cpu']).toBe('3');
  });

  it('keeps other tenants out: CloudSpace, virtual clusters and kubeconfig are not found', async () => {
    for (const path of ['', '/vclusters', '/vclusters/main', '/vclusters/main/kubeconfig']) {
      expectError(await call('GET', `/platform/api/v1/cloudspaces/${spaceId}${path}`, { token: bob }), 404, 'not_found');
    }
    expectError(await call('PATCH', `/platform/api/v1/cloudspaces/${spaceId}`, { token: bob, body: { name: 'mine' } }), 404, 'not_found');
    expectError(await call('DELETE', `/platform/api/v1/cloudspaces/${spaceId}`, { token: bob }), 404, 'not_found');
    expect((await call('GET', '/platform/api/v1/cloudspaces', { token: bob })).json.total).toBe(0);
  });

  it('refuses bad input and writes nothing', async () => {
    expectError(await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'Bad_Name' } }), 400, 'validation_failed');
    expectError(await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'ok', cpu_limit: 'lots' } }), 400, 'validation_failed');
    expectError(await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'ok', pod_limit: 0 } }), 400, 'validation_failed');
    expectError(await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'ok', cluster_id: '00000000-0000-4000-8000-000000000000' } }), 404, 'not_found');
    expectError(await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'shop-eu' } }), 409, 'conflict');
    expect((await call('GET', '/platform/api/v1/cloudspaces', { token: alice })).json.total).toBe(1);
  });

  it('waits out an unavailable API server, then provisions', async () => {
    sim.setAvailable(false);
    const r = await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'later' } });
    expect(r.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await call('GET', `/platform/api/v1/cloudspaces/${r.json.id}`, { token: alice })).json.status).toBe('Pending');
    sim.setAvailable(true);
    await eventually(async () => (await call('GET', `/platform/api/v1/cloudspaces/${r.json.id}`, { token: alice })).json.status === 'Ready', 'Ready after the outage', 40_000);
  }, 60_000);

  it('is reachable through the auth service routes too: create is self-service, management needs the admin role', async () => {
    const created = await call('POST', '/auth/api/v1/cloudspaces', { token: alice, body: { name: 'via-auth' } });
    expect(created.status).toBe(201);
    expectError(await call('PUT', `/auth/api/v1/cloudspaces/${created.json.id}`, { token: alice, body: { pod_limit: 10 } }), 403, 'forbidden');
    const updated = await call('PUT', `/auth/api/v1/cloudspaces/${created.json.id}`, { token: aliceAdmin, body: { name: 'via-auth-2' } });
    expect(updated.json.name).toBe('via-auth-2');
    expect((await call('GET', `/auth/api/v1/cloudspaces/${created.json.id}`, { token: alice })).json.name).toBe('via-auth-2');
    expectError(await call('DELETE', `/auth/api/v1/cloudspaces/${created.json.id}`, { token: alice }), 403, 'forbidden');
    expect((await call('DELETE', `/auth/api/v1/cloudspaces/${created.json.id}`, { token: aliceAdmin })).status).toBe(202);
  });

  it('deletes a CloudSpace with everything it created, and refuses deleting a cluster that hosts one', async () => {
    const clusters = await call('GET', '/platform/api/v1/clusters', { token: admin });
    const management = clusters.json.data.find((c: { source: string }) => c.source === 'self');
    expectError(await call('DELETE', `/platform/api/v1/clusters/${management.id}`, { token: admin }), 409, 'conflict');
    const space = (await call('GET', `/platform/api/v1/cloudspaces/${spaceId}`, { token: alice })).json;
    const r = await call('DELETE', `/platform/api/v1/cloudspaces/${spaceId}`, { token: alice });
    expect(r.status).toBe(202);
    expect(r.json.status).toBe('Deleting');
    await eventually(async () => (await call('GET', `/platform/api/v1/cloudspaces/${spaceId}`, { token: alice })).status === 404, 'CloudSpace gone');
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    await expect(core.readNamespace({ name: space.namespace })).rejects.toMatchObject({ code: 404 });
    expect(sim.virtualCluster(space.namespace, 'main')).toBeUndefined();
  });
});

describe('onboarding', () => {
  const TENANT_C = '3c000000-0000-4000-8000-00000000003c';

  it('provisions the first CloudSpace once and reports progress from real state, pipelines included (cicd, through federation)', async () => {
    const carol = await stack.token({ subject: 'carol', tenantId: TENANT_C, scopes: ['read', 'deploy'] });
    const before = await call('GET', '/platform/api/v1/onboarding/checklist', { token: carol });
    expect(before.json).toEqual({ tenant_id: TENANT_C, account: true, cloudspace_created: false, cloudspace_ready: false, first_cloudspace_id: null, first_webhook: false, first_app: false, first_app_running: false, first_pipeline: false, first_pipeline_run: false });
    const first = await call('POST', '/platform/api/v1/onboarding/provision', { token: carol, body: {} });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ created: true, cloudspace: { name: 'default', status: 'Pending' } });
    const again = await call('POST', '/platform/api/v1/onboarding/provision', { token: carol, body: { name: 'other' } });
    expect(again.json).toMatchObject({ created: false, cloudspace: { id: first.json.cloudspace.id } });
    await call('POST', '/cicd/api/v1/pipelines', { token: carol, body: { name: 'p', repository: 'Carol/Shop', provider: 'host_a' } });
    await call('POST', '/platform/api/v1/webhooks', { token: carol, body: { url: 'https://hooks.example.com/carol' } });
    const after = await eventually(async () => {
      const r = await call('GET', '/platform/api/v1/onboarding/checklist', { token: carol });
      return r.json.cloudspace_ready && r.json;
    }, 'checklist with a ready CloudSpace');
    expect(after).toMatchObject({ cloudspace_created: true, cloudspace_ready: true, first_cloudspace_id: first.json.cloudspace.id, first_webhook: true, first_app: false, first_pipeline: true, first_pipeline_run: false });
    const app = await call('POST', '/platform/api/v1/apps', { token: carol, body: { name: 'web', cloudspace_id: first.json.cloudspace.id, source: { type: 'image', image: 'nginx:1.27' }, port: 80 } });
    expect(app.status).toBe(201);
    // Created, not yet deployed: this stack has no fleet repository, so it never runs.
    expect((await call('GET', '/platform/api/v1/onboarding/checklist', { token: carol })).json).toMatchObject({ first_app: true, first_app_running: false });
    // Another tenant's progress is its own.
    expect((await call('GET', '/platform/api/v1/onboarding/checklist', { token: bob })).json).toMatchObject({ tenant_id: TENANT_B, first_pipeline: false });
    expectError(await call('GET', '/platform/api/v1/onboarding/checklist'), 401, 'unauthenticated');
    expectError(await call('POST', '/platform/api/v1/onboarding/provision', { token: admin, body: {} }), 400, 'validation_failed');
  });
});
