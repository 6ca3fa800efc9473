import { AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { join } from 'node:path';
import { createClient } from 'graphql-ws/client';
import WebSocket from 'ws';
import type { KubeSim } from '../../kube-sim/index.js';
import { openFleetRepo, type FleetRepo } from '../../subgraphs/platform/gitops/fleet-repo.js';
import { createLogger } from '../../kernel/logger.js';
import { expectError, httpClient } from '../helpers/http.js';
import { startAppsWorld, type AppsWorld } from '../helpers/apps-world.js';
import type { Stack } from '../helpers/stack.js';
import { eventually, outboxPayloads } from '../helpers/wait.js';

const TENANT_A = '4a000000-0000-4000-8000-00000000004a';
const TENANT_B = '4b000000-0000-4000-8000-00000000004b';
const logger = createLogger({ service: 'test', level: 'silent' });

let stack: Stack;
let sim: KubeSim;
let world: AppsWorld;
let history: FleetRepo;
let alice: string;
let bob: string;
let space: { id: string; name: string; namespace: string };
const call = httpClient(() => stack.base);


const outbox = (routingKey: string) => outboxPayloads(stack.database.url, routingKey);

const status = async (id: string) => (await call('GET', `/platform/api/v1/apps/${id}/deploy-status`, { token: alice })).json;
const vcluster = () => sim.virtualCluster(space.namespace, 'main')!.kubeConfig();
const commits = async (needle: string) => (await history.log()).filter((c) => c.message.includes(needle));
const create = (body: Record<string, unknown>, token = alice) =>
  call('POST', '/platform/api/v1/apps', { token, body: { cloudspace_id: space.id, source: { type: 'image', image: 'nginx:1.27' }, port: 8080, resources: { cpu_request: '100m', memory_request: '64Mi' }, tls: true, ...body } });

beforeAll(async () => {
  world = await startAppsWorld('e2e-apps', { a: TENANT_A, b: TENANT_B });
  ({ stack, sim, alice, bob, space } = world);
  history = await openFleetRepo({ url: world.repoUrl, branch: 'main', workdir: join(world.dir, 'reader'), author: { name: 't', email: 't@example.com' }, logger });
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

describe('apps on GitOps', () => {
  let shopId: string;

  it('creates an app in one request and follows it to reachable, with one commit and app.deployed', async () => {
    const r = await create({ name: 'shop', address: 'evil.example.com', env: [{ name: 'MODE', value: 'prod' }, { name: 'DB_PASSWORD', value: 's3cret', secret: true }], health_check: { path: '/' } });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ name: 'shop', address: 'shop-prod.apps.example.test', phase: 'Pending', vcluster: 'main', replicas: 1 });
    expect(r.json.env).toEqual([{ name: 'MODE', value: 'prod', secret: false }, { name: 'DB_PASSWORD', value: null, secret: true }]);
    shopId = r.json.id;
    const running = await eventually(async () => {
      const s = await status(shopId);
      return s.phase === 'Running' && s;
    }, 'Running');
    expect(running).toMatchObject({ gitops: 'Synced', ready_replicas: 1, reachable: true, revision: 1 });
    expect(await commits('app shop: created')).toHaveLength(1);
    const deployed = await eventually(async () => (await outbox('app.deployed')).find((e) => e.data.app_id === shopId), 'app.deployed');
    expect(deployed.data).toMatchObject({ app_name: 'shop', revision: 1, address: 'shop-prod.apps.example.test', image: 'nginx:1.27' });
    // The secret value is in the virtual cluster's Secret, not in Git.
    const files = await history.readFolder(`tenants/${TENANT_A}/${space.namespace}/main/shop`);
    expect(Object.keys(files).sort()).toEqual(['deployment.yaml', 'ingress.yaml', 'service.yaml']);
    expect(JSON.stringify(files)).not.toContain('s3cret');
    expect(files['ingress.yaml']).toContain('cert-manager.io/cluster-issuer');
  });

  it('scales at once in the virtual cluster and in Git', async () => {
    const r = await call('POST', `/platform/api/v1/apps/${shopId}/scale`, { token: alice, body: { replicas: 3 } });
    expect(r.status).toBe(200);
    const live = await vcluster().makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: 'default', name: 'shop' });
    expect(live.spec?.replicas).toBe(3);
    await eventually(async () => (await commits('app shop: scaled to 3')).length === 1, 'scale commit');
    const files = await history.readFolder(`tenants/${TENANT_A}/${space.namespace}/main/shop`);
    expect(files['deployment.yaml']).toMatch(/replicas: 3/);
    await eventually(async () => (await status(shopId)).ready_replicas === 3, 'three ready');
    // Detail and list show the workload live from the virtual cluster; other answers leave it out.
    const detail = await call('GET', `/platform/api/v1/apps/${shopId}`, { token: alice });
    expect(detail.json.workload).toEqual({ replicas: 3, ready_replicas: 3, updated_replicas: 3, available_replicas: 3, revision: 1 });
    const listed = await call('GET', `/platform/api/v1/apps?cloudspace_id=${space.id}`, { token: alice });
    expect(listed.json.data.find((a: { id: string }) => a.id === shopId).workload).toMatchObject({ replicas: 3, ready_replicas: 3 });
    expect(r.json).not.toHaveProperty('workload');
  });

  it('stops and starts, remembering the replica count', async () => {
    expect((await call('POST', `/platform/api/v1/apps/${shopId}/stop`, { token: alice })).json).toMatchObject({ replicas: 0, stopped_replicas: 3 });
    expect((await vcluster().makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: 'default', name: 'shop' })).spec?.replicas).toBe(0);
    await eventually(async () => (await status(shopId)).phase === 'Stopped', 'Stopped');
    expect((await call('POST', `/platform/api/v1/apps/${shopId}/start`, { token: alice })).json).toMatchObject({ replicas: 3, stopped_replicas: null });
    await eventually(async () => (await commits('app shop: started with 3 replicas')).length === 1, 'start commit');
    await eventually(async () => (await status(shopId)).phase === 'Running', 'Running again');
  });

  it('rolls back to an earlier revision: a new revision runs the old image', async () => {
    const updated = await call('PUT', `/platform/api/v1/apps/${shopId}`, { token: alice, body: { source: { type: 'image', image: 'nginx:1.28' } } });
    expect(updated.status).toBe(200);
    await eventually(async () => {
      const s = await status(shopId);
      return s.phase === 'Running' && s.revision === 2;
    }, 'revision 2 running');
    const revisions = (await call('GET', `/platform/api/v1/apps/${shopId}/deployments`, { token: alice })).json;
    expect(revisions.map((d: any) => [d.revision, d.image, d.current])).toEqual([
      [2, 'nginx:1.28', true],
      [1, 'nginx:1.27', false],
    ]);
    const back = await call('POST', `/platform/api/v1/apps/${shopId}/rollback`, { token: alice, body: { revision: 1 } });
    expect(back.status).toBe(200);
    expect(back.json).toMatchObject({ rolled_back_to: 1, app: { image: 'nginx:1.27' } });
    await eventually(async () => {
      const s = await status(shopId);
      return s.phase === 'Running' && s.revision === 3;
    }, 'revision 3 running');
    const after = (await call('GET', `/platform/api/v1/apps/${shopId}/deployments`, { token: alice })).json;
    expect(after[0]).toMatchObject({ revision: 3, image: 'nginx:1.27', current: true });
    expect(await commits('app shop: rolled back to revision 1')).toHaveLength(1);
    expectError(await call('POST', `/platform/api/v1/apps/${shopId}/rollback`, { token: alice, body: { revision: 99 } }), 404, 'not_found');
    expectError(await call('POST', `/platform/api/v1/apps/${shopId}/rollback`, { token: alice, body: {} }), 400, 'validation_failed');
  });

  it('reports a failing image with app.deploy_failed', async () => {
    const r = await create({ name: 'broken', source: { type: 'image', image: 'nginx:fail' } });
    expect(r.status).toBe(201);
    const failed = await eventually(async () => {
      const s = await status(r.json.id);
      return s.phase === 'Failed' && s;
    }, 'Failed');
    expect(failed).toMatchObject({ failure: 'image_pull', reachable: false });
    const event = await eventually(async () => (await outbox('app.deploy_failed')).find((e) => e.data.app_id === r.json.id), 'app.deploy_failed');
    expect(event.data).toMatchObject({ app_name: 'broken', reason: 'image_pull' });
  });

  it('creates the resource once the API server is back, exactly once', async () => {
    sim.setAvailable(false);
    const r = await create({ name: 'patient' });
    expect(r.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    sim.setAvailable(true);
    await eventually(async () => (await status(r.json.id)).phase === 'Running', 'Running after the outage', 60_000);
    const resources = (await sim.kubeConfig().makeApiClient(CustomObjectsApi).listNamespacedCustomObject({ group: 'platform.cloudops.dev', version: 'v1alpha1', namespace: space.namespace, plural: 'platformapps' })) as { items: { metadata: { name: string } }[] };
    expect(resources.items.filter((i) => i.metadata.name === 'patient')).toHaveLength(1);
    expect(await commits('app patient: created')).toHaveLength(1);
  }, 90_000);

  it('refuses bad input and writes nothing', async () => {
    const before = (await call('GET', '/platform/api/v1/apps', { token: alice })).json.total;
    expectError(await create({ name: 'Bad_Name' }), 400, 'validation_failed');
    expectError(await create({ name: 'ok', resources: { cpu_request: 'lots', memory_request: '64Mi' } }), 400, 'validation_failed');
    expectError(await create({ name: 'ok', port: 70000 }), 400, 'validation_failed');
    expectError(await create({ name: 'ok', source: { type: 'git' } }), 400, 'validation_failed');
    expectError(await create({ name: 'ok', cloudspace_id: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found');
    expectError(await create({ name: 'ok', tenant_cr_name: 'nope' }), 400, 'validation_failed');
    expectError(await create({ name: 'ok', domain: 'x.apps.example.test' }), 400, 'validation_failed');
    expectError(await create({ name: 'shop' }), 409, 'conflict');
    expect((await call('GET', '/platform/api/v1/apps', { token: alice })).json.total).toBe(before);
  });

  it('lists and creates apps under the auth service\'s CloudSpace routes too (spec 4.9)', async () => {
    const listed = await call('GET', `/auth/api/v1/cloudspaces/${space.id}/apps?limit=100`, { token: alice });
    expect(listed.status).toBe(200);
    expect(listed.json.data.map((a: { name: string }) => a.name)).toContain('shop');
    const created = await call('POST', `/auth/api/v1/cloudspaces/${space.id}/apps`, { token: alice, body: { name: 'via-auth', source: { type: 'image', image: 'nginx:1.27' }, port: 8080 } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'via-auth', cloudspace_id: space.id, address: 'via-auth-prod.apps.example.test' });
    expectError(await call('GET', `/auth/api/v1/cloudspaces/${space.id}/apps`, { token: bob }), 404, 'not_found');
    expectError(await call('POST', `/auth/api/v1/cloudspaces/${space.id}/apps`, { token: bob, body: { name: 'x', source: { type: 'image', image: 'nginx:1.27' }, port: 8080 } }), 404, 'not_found');
    expectError(await call('POST', `/auth/api/v1/cloudspaces/${space.id}/apps`, { token: alice, body: { name: 'x', cloudspace_id: '00000000-0000-4000-8000-000000000000', source: { type: 'image', image: 'nginx:1.27' }, port: 8080 } }), 400, 'validation_failed');
  });

  it('keeps other tenants out of every app route', async () => {
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/deploy-status'],
      ['GET', '/deployments'],
      ['PUT', ''],
      ['DELETE', ''],
      ['POST', '/restart'],
      ['POST', '/stop'],
      ['POST', '/start'],
    ] as const) {
      expectError(await call(method, `/platform/api/v1/apps/${shopId}${path}`, { token: bob, body: method === 'PUT' ? { replicas: 1 } : undefined }), 404, 'not_found');
    }
    expectError(await call('POST', `/platform/api/v1/apps/${shopId}/scale`, { token: bob, body: { replicas: 1 } }), 404, 'not_found');
    expectError(await create({ name: 'intruder' }, bob), 404, 'not_found');
    expect((await call('GET', '/platform/api/v1/apps', { token: bob })).json.total).toBe(0);
  });

  it('tells appStatusChanged subscribers (through the edge) how their app moves, and nobody else', async () => {
    const r = await create({ name: 'watched' });
    const wsUrl = `${stack.base.replace(/^http/, 'ws')}/graphql`;
    const mine = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${alice}` }, retryAttempts: 0 });
    const theirs = createClient({ url: wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${bob}` }, retryAttempts: 0 });
    const query = /* GraphQL */ `subscription($id: ID!) { appStatusChanged(appId: $id) { id phase } }`;
    const phases: string[] = [];
    const leaked: unknown[] = [];
    const reading = (async () => {
      for await (const result of mine.iterate<{ appStatusChanged: { phase: string } }>({ query, variables: { id: r.json.id } })) {
        phases.push(result.data!.appStatusChanged.phase);
        if (phases.includes('Running')) break;
      }
    })();
    void (async () => {
      for await (const result of theirs.iterate({ query, variables: { id: r.json.id } })) leaked.push(result);
    })().catch(() => undefined);
    await Promise.race([reading, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out with ${phases.join(', ')}`)), 30_000))]);
    await mine.dispose();
    await theirs.dispose();
    expect(phases[phases.length - 1]).toBe('Running');
    expect(leaked).toEqual([]);
  });

  it('deletes an app: resource, Git folder and workload go; app.deleted', async () => {
    const r = await call('DELETE', `/platform/api/v1/apps/${shopId}`, { token: alice });
    expect(r.status).toBe(202);
    expect(r.json.phase).toBe('Deleting');
    await eventually(async () => (await call('GET', `/platform/api/v1/apps/${shopId}`, { token: alice })).status === 404, 'app gone');
    expect(await history.readFolder(`tenants/${TENANT_A}/${space.namespace}/main/shop`)).toEqual({});
    expect(await commits('app shop: deleted')).toHaveLength(1);
    await eventually(async () => {
      const list = await vcluster().makeApiClient(AppsV1Api).listNamespacedDeployment({ namespace: 'default' });
      return !list.items.some((d) => d.metadata?.name === 'shop');
    }, 'deployment pruned');
    expect((await outbox('app.deleted')).find((e) => e.data.app_id === shopId)).toBeDefined();
  });
});
