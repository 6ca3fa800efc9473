import { AppsV1Api } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { KubeSim } from '../../kube-sim/index.js';
import type { LocalApplier } from '../../subgraphs/platform/gitops/local-applier.js';
import { expectError, httpClient } from '../helpers/http.js';
import { startAppsWorld, type AppsWorld } from '../helpers/apps-world.js';
import type { Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/wait.js';

const TENANT_A = '5a000000-0000-4000-8000-00000000005a';
const TENANT_B = '5b000000-0000-4000-8000-00000000005b';
const SECRET = 's3cret-value-never-shown';

let stack: Stack;
let sim: KubeSim;
let world: AppsWorld;
let applier: LocalApplier;
let alice: string;
let bob: string;
let space: { id: string; name: string; namespace: string };
let shop: string;
let cart: string;
const call = httpClient(() => stack.base);
const apps = '/platform/api/v1/apps';

const status = async (id: string) => (await call('GET', `${apps}/${id}/deploy-status`, { token: alice })).json;
const create = (body: Record<string, unknown>, token = alice) =>
  call('POST', apps, { token, body: { cloudspace_id: space.id, source: { type: 'image', image: 'nginx:1.27' }, port: 8080, resources: { cpu_request: '100m', memory_request: '64Mi' }, tls: true, ...body } });
const running = (id: string, revision: number) =>
  eventually(async () => {
    const s = await status(id);
    return s.phase === 'Running' && s.revision === revision && s;
  }, `revision ${revision} running`);
const get = (path: string, token = alice) => call('GET', `${apps}/${shop}${path}`, { token });

beforeAll(async () => {
  world = await startAppsWorld('e2e-app-extras', { a: TENANT_A, b: TENANT_B }, { logIntervalMs: 100 });
  ({ stack, sim, applier, alice, bob, space } = world);

  // shop: revision 1, then a new image and environment for revision 2. cart: another app in the same virtual cluster.
  const env = [{ name: 'MODE', value: 'prod' }, { name: 'DB_PASSWORD', value: SECRET, secret: true }];
  const r = await create({ name: 'shop', env, health_check: { path: '/' } });
  expect(r.status).toBe(201);
  shop = r.json.id;
  const c = await create({ name: 'cart', source: { type: 'image', image: 'shop/cart:3' } });
  expect(c.status).toBe(201);
  cart = c.json.id;
  await running(shop, 1);
  const updated = await call('PUT', `${apps}/${shop}`, {
    token: alice,
    body: { source: { type: 'image', image: 'nginx:1.28' }, env: [{ name: 'MODE', value: 'canary' }, { name: 'FEATURE_X', value: 'on' }, { name: 'DB_PASSWORD', value: SECRET, secret: true }] },
  });
  expect(updated.status).toBe(200);
  await running(shop, 2);
  await running(cart, 1);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

describe('revisions of an app', () => {
  it('answers one revision by deployment id and by revision number', async () => {
    const list = (await get('/deployments')).json;
    expect(list.map((d: any) => [d.revision, d.image, d.current])).toEqual([
      [2, 'nginx:1.28', true],
      [1, 'nginx:1.27', false],
    ]);
    const byId = await get(`/deployments/${list[0].id}`);
    expect(byId.status).toBe(200);
    expect(byId.json).toEqual({ ...list[0], tags: [], notes: '' });
    expect((await get('/deployments/2')).json).toEqual(byId.json);
    const first = (await get('/deployments/1')).json;
    expect(first).toMatchObject({ id: list[1].id, revision: 1, image: 'nginx:1.27', current: false, tags: [], notes: '' });
    expect(first.env).toEqual([{ name: 'MODE', value: 'prod', secret: false }, { name: 'DB_PASSWORD', value: null, secret: true }]);
  });

  it('exports a revision as YAML (default) and JSON, without secret values', async () => {
    const yaml = await get('/deployments/2/export');
    expect(yaml.status).toBe(200);
    expect(yaml.json).toMatchObject({ format: 'yaml', filename: 'shop-revision-2.yaml', content_type: 'application/yaml' });
    expect(yaml.text).not.toContain(SECRET);
    const document = parseYaml(yaml.json.content);
    expect(document).toMatchObject({
      app: 'shop',
      app_id: shop,
      revision: 2,
      config: {
        source: { type: 'image', image: 'nginx:1.28' },
        port: 8080,
        replicas: 1,
        resources: { cpu_request: '100m', memory_request: '64Mi' },
        health_check: { path: '/', port: 8080 },
      },
    });
    // As the ReplicaSet has them (kube-sim's apply keeps the order of variables already there).
    expect([...document.config.env].sort((a: any, b: any) => a.name.localeCompare(b.name))).toEqual([
      { name: 'DB_PASSWORD', value: null, secret: true },
      { name: 'FEATURE_X', value: 'on', secret: false },
      { name: 'MODE', value: 'canary', secret: false },
    ]);
    const json = await get('/deployments/1/export?format=json');
    expect(json.json).toMatchObject({ format: 'json', filename: 'shop-revision-1.json', content_type: 'application/json' });
    expect(json.text).not.toContain(SECRET);
    const parsed = JSON.parse(json.json.content);
    expect(parsed.config.source.image).toBe('nginx:1.27');
    expect(parsed.config.env).toEqual([{ name: 'MODE', value: 'prod', secret: false }, { name: 'DB_PASSWORD', value: null, secret: true }]);
    expect((await get(`/deployments/${parsed.deployment_id}/export?format=yaml`)).json.format).toBe('yaml');
  });

  it('keeps tags and notes per revision, and shows them in the list', async () => {
    const tagged = await call('POST', `${apps}/${shop}/deployments/2/tags`, { token: alice, body: { tags: ['stable', 'v1.28', 'stable'] } });
    expect(tagged.status).toBe(200);
    expect(tagged.json).toMatchObject({ revision: 2, tags: ['stable', 'v1.28'], notes: '' });
    const id = tagged.json.id;
    expect((await call('POST', `${apps}/${shop}/deployments/${id}/tags`, { token: alice, body: { tags: ['hot_fix-1', 'stable'] } })).json.tags).toEqual(['stable', 'v1.28', 'hot_fix-1']);
    const noted = await call('PUT', `${apps}/${shop}/deployments/2/notes`, { token: alice, body: { notes: 'Canary of 1.28; watch the error rate.' } });
    expect(noted.status).toBe(200);
    expect(noted.json).toMatchObject({ tags: ['stable', 'v1.28', 'hot_fix-1'], notes: 'Canary of 1.28; watch the error rate.' });
    expect((await call('PUT', `${apps}/${shop}/deployments/1/notes`, { token: alice, body: { notes: 'first' } })).json).toMatchObject({ revision: 1, tags: [], notes: 'first' });
    expect((await get(`/deployments/${id}`)).json).toMatchObject({ tags: ['stable', 'v1.28', 'hot_fix-1'], notes: 'Canary of 1.28; watch the error rate.' });
    const list = (await get('/deployments')).json;
    expect(list.map((d: any) => [d.revision, d.tags, d.notes])).toEqual([
      [2, ['stable', 'v1.28', 'hot_fix-1'], 'Canary of 1.28; watch the error rate.'],
      [1, [], 'first'],
    ]);
    // Through GraphQL too, with an alias on the list.
    const gql = await call('POST', '/graphql', { token: alice, body: { query: 'query($id: ID!) { revisions: appDeployments(id: $id) { revision tags notes } }', variables: { id: shop } } });
    expect(gql.json.data.revisions).toEqual([
      { revision: 2, tags: ['stable', 'v1.28', 'hot_fix-1'], notes: 'Canary of 1.28; watch the error rate.' },
      { revision: 1, tags: [], notes: 'first' },
    ]);
    // Another app's list does not show them.
    expect((await call('GET', `${apps}/${cart}/deployments`, { token: alice })).json.map((d: any) => d.tags)).toEqual([[]]);
  });

  it('compares two revisions field by field, never showing a secret value', async () => {
    const r = await get('/deployments/compare?from=1&to=2');
    expect(r.status).toBe(200);
    expect(r.json.from).toMatchObject({ revision: 1, image: 'nginx:1.27' });
    expect(r.json.to).toMatchObject({ revision: 2, image: 'nginx:1.28', tags: ['stable', 'v1.28', 'hot_fix-1'] });
    expect(r.json.differences).toEqual([
      { field: 'image', change: 'changed', from: 'nginx:1.27', to: 'nginx:1.28' },
      { field: 'env.FEATURE_X', change: 'added', from: null, to: 'on' },
      { field: 'env.MODE', change: 'changed', from: 'prod', to: 'canary' },
    ]);
    expect(r.text).not.toContain(SECRET);
    const back = await get(`/deployments/compare?from=${r.json.to.id}&to=${r.json.from.id}`);
    expect(back.json.differences).toEqual([
      { field: 'image', change: 'changed', from: 'nginx:1.28', to: 'nginx:1.27' },
      { field: 'env.FEATURE_X', change: 'removed', from: 'on', to: null },
      { field: 'env.MODE', change: 'changed', from: 'canary', to: 'prod' },
    ]);
    expect((await get('/deployments/compare?from=2&to=2')).json.differences).toEqual([]);
    // `compare` is a path of its own, not a deployment id; other methods are 405 there.
    expectError(await call('POST', `${apps}/${shop}/deployments/compare`, { token: alice, body: {} }), 405, 'method_not_allowed');
  });
});

describe('configuration of an app', () => {
  it('answers the configuration and the environment, secret values masked', async () => {
    const config = await get('/config');
    expect(config.status).toBe(200);
    expect(config.json).toMatchObject({
      id: shop,
      name: 'shop',
      image: 'nginx:1.28',
      port: 8080,
      resources: { cpu_request: '100m', memory_request: '64Mi' },
      tls: true,
      domain: null,
      address: 'shop-prod.apps.example.test',
      replicas: 1,
      autoscaling: null,
      health_check: { path: '/', port: 8080, initial_delay_secs: 5, period_secs: 10 },
    });
    expect(config.json.env).toEqual([
      { name: 'MODE', value: 'canary', secret: false },
      { name: 'FEATURE_X', value: 'on', secret: false },
      { name: 'DB_PASSWORD', value: null, secret: true },
    ]);
    expect(config.text).not.toContain(SECRET);
    const env = await get('/config/env-vars');
    expect(env.json).toEqual({ env: config.json.env });
  });

  it('changes the configuration like PUT /apps/{id}', async () => {
    const r = await call('PUT', `${apps}/${shop}/config`, { token: alice, body: { replicas: 2 } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: shop, replicas: 2, image: 'nginx:1.28' });
    expect((await call('GET', `${apps}/${shop}`, { token: alice })).json.replicas).toBe(2);
    await eventually(async () => (await status(shop)).ready_replicas === 2, 'two ready replicas');
    expectError(await call('PUT', `${apps}/${shop}/config`, { token: alice, body: { port: 0 } }), 400, 'validation_failed');
    expectError(await call('PUT', `${apps}/${shop}/config`, { token: alice, body: { tenant_id: TENANT_B } }), 400, 'validation_failed');
  });
});

describe('live state of an app', () => {
  let shopPods: string[];

  it('lists the app\'s pods only', async () => {
    const pods = await eventually(async () => {
      const r = await get('/pods');
      return r.json.total === 2 && r.json.data.every((p: any) => p.ready === '1/1' && p.images[0] === 'nginx:1.28') && r.json;
    }, 'two ready pods of revision 2');
    expect(pods.next_cursor).toBeNull();
    for (const pod of pods.data) {
      expect(pod).toEqual({
        vcluster: 'main',
        namespace: 'default',
        name: expect.stringMatching(/^shop-[a-z0-9]+-[a-z0-9]{5}$/),
        phase: 'Running',
        status: 'Running',
        ready: '1/1',
        restarts: 0,
        node: expect.any(String),
        ip: expect.any(String),
        images: ['nginx:1.28'],
        created_at: expect.any(String),
      });
    }
    shopPods = pods.data.map((p: any) => p.name);
    const page = await get('/pods?limit=1');
    expect(page.json).toMatchObject({ total: 2, data: [{ name: shopPods[0] }], next_cursor: expect.any(String) });
    expect((await get(`/pods?limit=1&cursor=${page.json.next_cursor}`)).json).toMatchObject({ data: [{ name: shopPods[1] }], next_cursor: null });
    const cartPods = (await call('GET', `${apps}/${cart}/pods`, { token: alice })).json;
    expect(cartPods.data.map((p: any) => p.images)).toEqual([['shop/cart:3']]);
  });

  it('lists the events of its Deployment, ReplicaSets and pods only', async () => {
    const events = (await get('/events?limit=100')).json;
    expect(events.total).toBeGreaterThan(0);
    const objects = events.data.map((e: any) => `${e.involved_object.kind}/${e.involved_object.name}`);
    for (const o of objects) expect(o).toMatch(/^(Deployment\/shop|ReplicaSet\/shop-[a-z0-9]+|Pod\/shop-[a-z0-9]+-[a-z0-9]{5})$/);
    expect(objects).toContain('Deployment/shop');
    expect(objects.some((o: string) => o.startsWith('Pod/'))).toBe(true);
    expect(events.data.find((e: any) => e.reason === 'ScalingReplicaSet')).toMatchObject({ vcluster: 'main', namespace: 'default', type: 'Normal', source: 'deployment-controller' });
    const times = events.data.map((e: any) => e.last_timestamp);
    expect([...times].sort()).toEqual(times);
    const cartEvents = (await call('GET', `${apps}/${cart}/events?limit=100`, { token: alice })).json.data;
    expect(cartEvents.length).toBeGreaterThan(0);
    expect(cartEvents.every((e: any) => e.involved_object.name.startsWith('cart'))).toBe(true);
  });

  it('answers CPU and memory use per pod and in total', async () => {
    const r = await get('/metrics');
    expect(r.status).toBe(200);
    expect(r.json.vcluster).toBe('main');
    expect(r.json.pods.map((p: any) => p.pod).sort()).toEqual([...shopPods].sort());
    for (const pod of r.json.pods) {
      expect(pod).toMatchObject({ cpu: expect.stringMatching(/^\d+m$/), memory: expect.stringMatching(/^\d+Mi$/), window: '15s', containers: [{ name: 'app', cpu_millicores: expect.any(Number), memory_bytes: expect.any(Number) }] });
      // kube-sim: a share of the requests (100m, 64Mi).
      expect(pod.cpu_millicores).toBeGreaterThan(0);
      expect(pod.cpu_millicores).toBeLessThanOrEqual(100);
      expect(pod.memory_bytes).toBeGreaterThan(0);
      expect(pod.memory_bytes).toBeLessThanOrEqual(64 * 2 ** 20);
    }
    const sum = (key: string) => r.json.pods.reduce((s: number, p: any) => s + p[key], 0);
    expect(r.json.totals.pods).toBe(2);
    expect(r.json.totals.cpu_millicores).toBeCloseTo(sum('cpu_millicores'), 2);
    expect(r.json.totals.memory_bytes).toBe(sum('memory_bytes'));
    const cartMetrics = (await call('GET', `${apps}/${cart}/metrics`, { token: alice })).json;
    expect(cartMetrics.totals.pods).toBe(1);
    expect(cartMetrics.pods[0].pod).toMatch(/^cart-/);
  });

  it('answers the last lines of the log of one of its pods', async () => {
    const r = await get('/logs?tail=3');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ vcluster: 'main', namespace: 'default', pod: expect.any(String), container: 'app', lines: [expect.any(String), expect.any(String), expect.any(String)] });
    expect(shopPods).toContain(r.json.pod);
    const chosen = await get(`/logs?pod=${shopPods[1]}&tail=2&timestamps=true`);
    expect(chosen.json).toMatchObject({ pod: shopPods[1], container: 'app' });
    expect(chosen.json.lines).toHaveLength(2);
    for (const line of chosen.json.lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z /);
    expect((await get('/logs?tail=0')).json.lines).toEqual([]);
    // A pod of another app of the same virtual cluster is not this app's.
    const cartPod = (await call('GET', `${apps}/${cart}/pods`, { token: alice })).json.data[0].name;
    expectError(await get(`/logs?pod=${cartPod}`), 404, 'not_found');
    expectError(await get(`/logs?pod=${cartPod}&follow=true`), 404, 'not_found');
    expectError(await get('/logs?container=sidecar'), 400, 'validation_failed');
  });

  it('follows a log as a stream: lines arrive while the response is open; leaving closes the upstream', async () => {
    const cluster = sim.virtualCluster(space.namespace, 'main')!.cluster;
    const idle = cluster.streams.size;
    const controller = new AbortController();
    const response = await fetch(`${stack.base}${apps}/${shop}/logs?follow=true&tail=1&pod=${shopPods[0]}`, { headers: { authorization: `Bearer ${alice}` }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: { at: number; lines: number }[] = [];
    let text = '';
    while (text.split('\n').filter(Boolean).length < 5) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += decoder.decode(value, { stream: true });
      arrivals.push({ at: Date.now(), lines: text.split('\n').filter(Boolean).length });
      expect(cluster.streams.size).toBe(idle + 1);
    }
    controller.abort();
    expect(arrivals[0]!.lines).toBe(1);
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect(arrivals.at(-1)!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(200);
    await eventually(async () => cluster.streams.size === idle, 'the follow to the virtual cluster closed', 3000);
    // Without a pod: one of the app's.
    const other = new AbortController();
    const byDefault = await fetch(`${stack.base}${apps}/${shop}/logs?follow=true&tail=1`, { headers: { authorization: `Bearer ${alice}` }, signal: other.signal });
    expect(byDefault.status).toBe(200);
    expect((await byDefault.body!.getReader().read()).done).toBe(false);
    other.abort();
    await eventually(async () => cluster.streams.size === idle, 'the second follow closed', 3000);
  });

  it('leaves out a workload of the tenant\'s own that uses the app\'s name label', async () => {
    const labels = { 'app.kubernetes.io/name': 'shop', role: 'imposter' };
    await sim
      .virtualCluster(space.namespace, 'main')!
      .kubeConfig()
      .makeApiClient(AppsV1Api)
      .createNamespacedDeployment({
        namespace: 'default',
        body: { metadata: { name: 'imposter', labels }, spec: { replicas: 1, selector: { matchLabels: { role: 'imposter' } }, template: { metadata: { labels }, spec: { containers: [{ name: 'x', image: 'busybox:1' }] } } } },
      });
    await eventually(async () => (await call('GET', `/platform/api/v1/cloudspaces/${space.id}/pods?limit=100`, { token: alice })).json.data.some((p: any) => p.name.startsWith('imposter-') && p.ready === '1/1'), 'imposter running');
    expect((await get('/pods')).json.data.map((p: any) => p.name).sort()).toEqual([...shopPods].sort());
    expect((await get('/metrics')).json.totals.pods).toBe(2);
    expect((await get('/events?limit=100')).json.data.some((e: any) => e.involved_object.name.startsWith('imposter'))).toBe(false);
    const rs = (await sim.virtualCluster(space.namespace, 'main')!.kubeConfig().makeApiClient(AppsV1Api).listNamespacedReplicaSet({ namespace: 'default', labelSelector: 'role=imposter' })).items[0]!;
    expectError(await get(`/deployments/${rs.metadata!.name}`), 404, 'not_found');
    await sim.virtualCluster(space.namespace, 'main')!.kubeConfig().makeApiClient(AppsV1Api).deleteNamespacedDeployment({ namespace: 'default', name: 'imposter' });
  });

  it('answers 503 upstream_unavailable while the virtual cluster cannot be reached', async () => {
    const main = sim.virtualCluster(space.namespace, 'main')!;
    main.setAvailable(false);
    try {
      for (const path of ['/deployments/2', '/deployments/compare?from=1&to=2', '/deployments/2/export', '/pods', '/events', '/metrics', '/logs', '/logs?follow=true']) {
        const r = await get(path);
        expectError(r, 503, 'upstream_unavailable');
        expect({ path, message: r.json.error.message }).toEqual({ path, message: expect.stringMatching(/virtual cluster main/) });
      }
      // Configuration is the platform's: it still answers, and so does the app, without its live workload.
      expect((await get('/config')).status).toBe(200);
      const detail = await get('');
      expect(detail.status).toBe(200);
      expect(detail.json.workload).toBeNull();
    } finally {
      main.setAvailable(true);
    }
    expect((await get('/pods')).status).toBe(200);
  });
});

describe('refusals', () => {
  it('keeps other tenants out of every route', async () => {
    for (const [method, path, body] of [
      ['GET', '/deployments/2', undefined],
      ['GET', '/deployments/1/export?format=json', undefined],
      ['GET', '/deployments/compare?from=1&to=2', undefined],
      ['POST', '/deployments/2/tags', { tags: ['mine'] }],
      ['PUT', '/deployments/2/notes', { notes: 'mine' }],
      ['GET', '/config', undefined],
      ['PUT', '/config', { replicas: 1 }],
      ['GET', '/config/env-vars', undefined],
      ['GET', '/pods', undefined],
      ['GET', '/events', undefined],
      ['GET', '/metrics', undefined],
      ['GET', '/logs', undefined],
      ['GET', '/logs?follow=true', undefined],
    ] as const) {
      const r = await call(method, `${apps}/${shop}${path}`, { token: bob, body });
      expect({ method, path, status: r.status, code: r.json?.error?.code }).toEqual({ method, path, status: 404, code: 'not_found' });
    }
    // Nothing changed.
    expect((await get('/deployments/2')).json).toMatchObject({ tags: ['stable', 'v1.28', 'hot_fix-1'], notes: 'Canary of 1.28; watch the error rate.' });
    expect((await get('/config')).json.replicas).toBe(2);
    const readOnly = await stack.token({ subject: 'viewer', tenantId: TENANT_A, scopes: ['read'] });
    expectError(await call('POST', `${apps}/${shop}/deployments/2/tags`, { token: readOnly, body: { tags: ['x'] } }), 403, 'forbidden');
    expectError(await call('GET', `${apps}/${shop}/logs?follow=true`), 401, 'unauthenticated');
  });

  it('refuses bad input with the error envelope', async () => {
    const tags = (body: unknown, revision = '2') => call('POST', `${apps}/${shop}/deployments/${revision}/tags`, { token: alice, body });
    expectError(await get('/deployments/2/export?format=xml'), 400, 'validation_failed');
    expectError(await tags({ tags: ['has space'] }), 400, 'validation_failed');
    expectError(await tags({ tags: ['x'.repeat(41)] }), 400, 'validation_failed');
    expectError(await tags({ tags: [] }), 400, 'validation_failed');
    expectError(await tags({ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }), 400, 'validation_failed');
    // 3 tags already: 18 more would make 21.
    expectError(await tags({ tags: Array.from({ length: 18 }, (_, i) => `t${i}`) }), 400, 'validation_failed');
    expectError(await tags({ labels: ['x'] }), 400, 'validation_failed');
    expectError(await call('PUT', `${apps}/${shop}/deployments/2/notes`, { token: alice, body: { notes: 'x'.repeat(4001) } }), 400, 'validation_failed');
    expect((await get('/deployments/2')).json).toMatchObject({ tags: ['stable', 'v1.28', 'hot_fix-1'], notes: 'Canary of 1.28; watch the error rate.' });
    expectError(await get('/deployments/compare'), 400, 'validation_failed');
    expectError(await get('/deployments/compare?from=1'), 400, 'validation_failed');
    expectError(await get('/deployments/compare?to=2'), 400, 'validation_failed');
    expectError(await get('/logs?tail=10001'), 400, 'validation_failed');
    expectError(await get('/logs?tail=-1'), 400, 'validation_failed');
    expectError(await get('/logs?tail=-1&follow=true'), 400, 'validation_failed');
    expectError(await get('/logs?since_seconds=0'), 400, 'validation_failed');
    expectError(await get('/logs?follow=maybe'), 400, 'validation_failed');
  });

  it('answers 404 for a revision the app does not have', async () => {
    expectError(await get('/deployments/99'), 404, 'not_found');
    expectError(await get('/deployments/shop-nope'), 404, 'not_found');
    expectError(await get('/deployments/99/export'), 404, 'not_found');
    expectError(await get('/deployments/compare?from=1&to=99'), 404, 'not_found');
    expectError(await call('POST', `${apps}/${shop}/deployments/99/tags`, { token: alice, body: { tags: ['x'] } }), 404, 'not_found');
    expectError(await call('PUT', `${apps}/${shop}/deployments/99/notes`, { token: alice, body: { notes: 'x' } }), 404, 'not_found');
    // A revision of another app is not this app's.
    const cartRevision = (await call('GET', `${apps}/${cart}/deployments`, { token: alice })).json[0].id;
    expectError(await get(`/deployments/${cartRevision}`), 404, 'not_found');
    expectError(await call('GET', `${apps}/00000000-0000-4000-8000-000000000000/deployments/1`, { token: alice }), 404, 'not_found');
  });

  it('answers 409 while an app has not been deployed yet', async () => {
    // Without the GitOps stand-in nothing reaches the virtual cluster.
    await applier.stop();
    const r = await create({ name: 'later' });
    expect(r.status).toBe(201);
    const later = `${apps}/${r.json.id}`;
    expectError(await call('GET', `${later}/deployments/1`, { token: alice }), 409, 'conflict');
    expectError(await call('GET', `${later}/deployments/1/export`, { token: alice }), 409, 'conflict');
    expectError(await call('GET', `${later}/deployments/compare?from=1&to=2`, { token: alice }), 409, 'conflict');
    expectError(await call('POST', `${later}/deployments/1/tags`, { token: alice, body: { tags: ['x'] } }), 409, 'conflict');
    expectError(await call('GET', `${later}/logs`, { token: alice }), 409, 'conflict');
    expectError(await call('GET', `${later}/logs?follow=true`, { token: alice }), 409, 'conflict');
    expect((await call('GET', `${later}/pods`, { token: alice })).json).toEqual({ data: [], next_cursor: null, total: 0 });
    expect((await call('GET', `${later}/metrics`, { token: alice })).json.totals).toEqual({ pods: 0, cpu_millicores: 0, memory_bytes: 0, cpu: '0m', memory: '0Mi' });
    expect((await call('GET', `${later}/config`, { token: alice })).json).toMatchObject({ name: 'later', image: 'nginx:1.27' });
  });
});
