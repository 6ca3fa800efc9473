import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, NetworkingV1Api, type V1Deployment } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { expectError, httpClient } from '../helpers/http.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TENANT_A = '3a000000-0000-4000-8000-0000000000a1';
const TENANT_B = '3b000000-0000-4000-8000-0000000000b1';
const VIEWS = ['pods', 'events', 'deployments', 'services', 'ingresses', 'pvcs', 'jobs', 'cronjobs'] as const;
/** Objects that live elsewhere: the host cluster, another CloudSpace of the tenant, another tenant's. */
const FOREIGN = ['host-only', 'side-only', 'bob-secret'];

let stack: Stack;
let sim: KubeSim;
let dir: string;
let alice: string;
let bob: string;
const call = httpClient(() => stack.base);
const spaces: Record<'shop' | 'side' | 'bobs', { id: string; namespace: string }> = {} as never;

async function eventually<T>(check: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function readySpace(token: string, name: string): Promise<{ id: string; namespace: string }> {
  const created = await call('POST', '/platform/api/v1/cloudspaces', { token, body: { name } });
  expect(created.status).toBe(201);
  return eventually(async () => {
    const r = await call('GET', `/platform/api/v1/cloudspaces/${created.json.id}`, { token });
    return r.json.status === 'Ready' && { id: r.json.id as string, namespace: r.json.namespace as string };
  }, `CloudSpace ${name} Ready`);
}

const deployment = (name: string, replicas: number, image: string, requests?: Record<string, string>): V1Deployment => ({
  metadata: { name, labels: { app: name } },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image, ...(requests ? { resources: { requests } } : {}) }] } },
  },
});

const base = (id: string) => `/platform/api/v1/cloudspaces/${id}`;

/** Every item of a view, walking its pages `limit` at a time. */
async function walk(path: string, limit: number): Promise<{ items: any[]; pages: number; totals: number[] }> {
  const items: any[] = [];
  const totals: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const r = await call('GET', `${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { token: alice });
    expect(r.status).toBe(200);
    items.push(...r.json.data);
    totals.push(r.json.total);
    cursor = r.json.next_cursor;
    pages += 1;
  } while (cursor);
  return { items, pages, totals };
}

const where = (item: { vcluster: string; namespace: string; name: string }) => `${item.vcluster}/${item.namespace}/${item.name}`;

beforeAll(async () => {
  sim = await startKubeSim({ podReadyDelayMs: 0, clusterPhaseDelayMs: 100, logIntervalMs: 100 });
  dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  writeFileSync(join(dir, 'host'), sim.kubeconfig);
  stack = await startStack('e2e_cloudspace_views', {}, { KUBECONFIG: join(dir, 'host'), REGISTER_MANAGEMENT_CLUSTER: 'true' });
  alice = await stack.token({ subject: 'alice', tenantId: TENANT_A, scopes: ['read', 'deploy'] });
  bob = await stack.token({ subject: 'bob', tenantId: TENANT_B, scopes: ['read', 'deploy'] });
  [spaces.shop, spaces.side, spaces.bobs] = await Promise.all([readySpace(alice, 'shop'), readySpace(alice, 'side'), readySpace(bob, 'bobs')]);
  expect((await call('POST', `${base(spaces.shop.id)}/vclusters`, { token: alice, body: { name: 'staging' } })).status).toBe(201);
  await eventually(async () => (await call('GET', `${base(spaces.shop.id)}/vclusters/staging`, { token: alice })).json.ready, 'staging ready');

  // The shop's default virtual cluster, through the kubeconfig a tenant downloads.
  const download = await call('GET', `${base(spaces.shop.id)}/vclusters/main/kubeconfig`, { token: alice });
  const main = new KubeConfig();
  main.loadFromString(download.json.kubeconfig);
  const core = main.makeApiClient(CoreV1Api);
  const apps = main.makeApiClient(AppsV1Api);
  const batch = main.makeApiClient(BatchV1Api);
  await core.createNamespace({ body: { metadata: { name: 'web' } } });
  await apps.createNamespacedDeployment({ namespace: 'web', body: deployment('api', 2, 'nginx:1.27') });
  await apps.createNamespacedDeployment({ namespace: 'default', body: deployment('worker', 1, 'shop/worker:2') });
  await core.createNamespacedService({ namespace: 'web', body: { metadata: { name: 'api' }, spec: { selector: { app: 'api' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] } } });
  await main.makeApiClient(NetworkingV1Api).createNamespacedIngress({
    namespace: 'web',
    body: {
      metadata: { name: 'api' },
      spec: {
        ingressClassName: 'nginx',
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 80 } } } }] } }],
      },
    },
  });
  await core.createNamespacedPersistentVolumeClaim({ namespace: 'web', body: { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'fast', resources: { requests: { storage: '5Gi' } } } } });
  await batch.createNamespacedJob({ namespace: 'web', body: { metadata: { name: 'migrate' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'shop/migrate:1' }] } } } } });
  await batch.createNamespacedCronJob({
    namespace: 'web',
    body: { metadata: { name: 'nightly' }, spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'OnFailure', containers: [{ name: 'report', image: 'shop/report:1' }] } } } } } },
  });
  // Its second virtual cluster.
  await sim.virtualCluster(spaces.shop.namespace, 'staging')!.kubeConfig().makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: 'default', body: deployment('api', 1, 'nginx:1.28') });
  // Elsewhere: the host cluster (the shop's own namespace there), the tenant's other CloudSpace, another tenant's.
  await sim.kubeConfig().makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: spaces.shop.namespace, body: deployment('host-only', 1, 'nginx:1.27', { cpu: '100m', memory: '64Mi' }) });
  await sim.virtualCluster(spaces.side.namespace, 'main')!.kubeConfig().makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: 'default', body: deployment('side-only', 1, 'nginx:1.27') });
  await sim.virtualCluster(spaces.bobs.namespace, 'main')!.kubeConfig().makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: 'default', body: deployment('bob-secret', 1, 'nginx:1.27') });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await sim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('CloudSpace-wide views', () => {
  it('lists the pods of every virtual cluster of the CloudSpace, summarised', async () => {
    const pods = await eventually(async () => {
      const r = await call('GET', `${base(spaces.shop.id)}/pods`, { token: alice });
      return r.json.total === 4 && r.json.data.every((p: { ready: string }) => p.ready === '1/1') && r.json;
    }, 'four ready pods');
    expect(pods.data.map((p: { vcluster: string; namespace: string; name: string }) => `${p.vcluster}/${p.namespace}/${p.name.replace(/-[a-z0-9]+-[a-z0-9]{5}$/, '')}`)).toEqual([
      'main/default/worker',
      'main/web/api',
      'main/web/api',
      'staging/default/api',
    ]);
    const worker = pods.data[0];
    expect(worker).toEqual({
      vcluster: 'main',
      namespace: 'default',
      name: expect.stringMatching(/^worker-/),
      phase: 'Running',
      status: 'Running',
      ready: '1/1',
      restarts: 0,
      node: expect.stringMatching(/^kube-sim-node-\d$/),
      ip: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/),
      images: ['shop/worker:2'],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    });
    expect(pods.next_cursor).toBeNull();
  });

  it('lists Deployments with replica counts, images and revision', async () => {
    const r = await eventually(async () => {
      const list = await call('GET', `${base(spaces.shop.id)}/deployments`, { token: alice });
      return list.json.data.every((d: { available: number; replicas: number }) => d.available === d.replicas) && list.json;
    }, 'deployments available');
    expect(r.total).toBe(3);
    expect(r.data).toEqual([
      { vcluster: 'main', namespace: 'default', name: 'worker', replicas: 1, ready: 1, updated: 1, available: 1, images: ['shop/worker:2'], revision: 1, created_at: expect.any(String) },
      { vcluster: 'main', namespace: 'web', name: 'api', replicas: 2, ready: 2, updated: 2, available: 2, images: ['nginx:1.27'], revision: 1, created_at: expect.any(String) },
      { vcluster: 'staging', namespace: 'default', name: 'api', replicas: 1, ready: 1, updated: 1, available: 1, images: ['nginx:1.28'], revision: 1, created_at: expect.any(String) },
    ]);
  });

  it('lists Services, Ingresses, PersistentVolumeClaims, Jobs and CronJobs with their summaries', async () => {
    const services = (await call('GET', `${base(spaces.shop.id)}/services?namespace=web`, { token: alice })).json;
    expect(services.data).toEqual([
      {
        vcluster: 'main',
        namespace: 'web',
        name: 'api',
        type: 'ClusterIP',
        cluster_ip: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/),
        external_ips: [],
        ports: [{ name: 'http', port: 80, target_port: '8080', protocol: 'TCP', node_port: null }],
        created_at: expect.any(String),
      },
    ]);
    const ingresses = (await call('GET', `${base(spaces.shop.id)}/ingresses`, { token: alice })).json;
    expect(ingresses).toEqual({
      data: [
        {
          vcluster: 'main',
          namespace: 'web',
          name: 'api',
          class_name: 'nginx',
          hosts: ['shop.example.com'],
          tls: [{ hosts: ['shop.example.com'], secret_name: 'shop-tls' }],
          rules: [{ host: 'shop.example.com', path: '/', service: 'api', port: '80' }],
          addresses: [],
          created_at: expect.any(String),
        },
      ],
      next_cursor: null,
      total: 1,
    });
    const pvcs = (await call('GET', `${base(spaces.shop.id)}/pvcs`, { token: alice })).json;
    expect(pvcs.data).toEqual([
      { vcluster: 'main', namespace: 'web', name: 'data', phase: 'Bound', capacity: '5Gi', requested: '5Gi', storage_class: 'fast', access_modes: ['ReadWriteOnce'], volume: expect.stringMatching(/^pvc-/), created_at: expect.any(String) },
    ]);
    const jobs = (await call('GET', `${base(spaces.shop.id)}/jobs`, { token: alice })).json;
    expect(jobs.data).toEqual([
      {
        vcluster: 'main',
        namespace: 'web',
        name: 'migrate',
        status: 'Running',
        completions: 1,
        parallelism: 1,
        succeeded: 0,
        failed: 0,
        active: 0,
        images: ['shop/migrate:1'],
        started_at: null,
        completed_at: null,
        created_at: expect.any(String),
      },
    ]);
    const cronjobs = (await call('GET', `${base(spaces.shop.id)}/cronjobs`, { token: alice })).json;
    expect(cronjobs.data).toEqual([
      { vcluster: 'main', namespace: 'web', name: 'nightly', schedule: '0 3 * * *', time_zone: null, suspend: false, active: 0, last_schedule: null, last_successful_time: null, images: ['shop/report:1'], created_at: expect.any(String) },
    ]);
  });

  it('lists the events of the virtual clusters', async () => {
    const { items } = await walk(`${base(spaces.shop.id)}/events`, 100);
    const scaled = items.find((e) => e.vcluster === 'main' && e.reason === 'ScalingReplicaSet' && e.involved_object.name === 'api');
    expect(scaled).toEqual({
      vcluster: 'main',
      namespace: 'web',
      name: expect.any(String),
      type: 'Normal',
      reason: 'ScalingReplicaSet',
      message: expect.stringMatching(/^Scaled up replica set api-/),
      involved_object: { kind: 'Deployment', name: 'api', namespace: 'web' },
      count: expect.any(Number),
      source: 'deployment-controller',
      first_timestamp: expect.any(String),
      last_timestamp: expect.any(String),
    });
    expect(items.some((e) => e.vcluster === 'staging' && e.reason === 'Started')).toBe(true);
    expect(new Set(items.map((e) => e.vcluster))).toEqual(new Set(['main', 'staging']));
  });

  it('shows nothing of the host cluster, of the tenant\'s other CloudSpace or of another tenant', async () => {
    for (const view of VIEWS) {
      const { items } = await walk(`${base(spaces.shop.id)}/${view}`, 100);
      const text = JSON.stringify(items);
      for (const foreign of FOREIGN) expect({ view, foreign, found: text.includes(foreign) }).toEqual({ view, foreign, found: false });
      expect(items.every((i) => i.vcluster === 'main' || i.vcluster === 'staging')).toBe(true);
    }
    // The others do see their own.
    const side = await eventually(async () => {
      const r = await call('GET', `${base(spaces.side.id)}/deployments`, { token: alice });
      return r.json.total === 1 && r.json;
    }, 'side deployment');
    expect(side.data[0]).toMatchObject({ vcluster: 'main', namespace: 'default', name: 'side-only' });
    expect((await call('GET', `${base(spaces.bobs.id)}/deployments`, { token: bob })).json.data.map((d: { name: string }) => d.name)).toEqual(['bob-secret']);
  });

  it('filters by virtual cluster and namespace', async () => {
    const staging = (await call('GET', `${base(spaces.shop.id)}/pods?vcluster=staging`, { token: alice })).json;
    expect(staging.total).toBe(1);
    expect(staging.data[0]).toMatchObject({ vcluster: 'staging', namespace: 'default', images: ['nginx:1.28'] });
    const web = (await call('GET', `${base(spaces.shop.id)}/deployments?namespace=web`, { token: alice })).json;
    expect(web.data.map(where)).toEqual(['main/web/api']);
    const both = (await call('GET', `${base(spaces.shop.id)}/deployments?vcluster=main&namespace=default`, { token: alice })).json;
    expect(both.data.map(where)).toEqual(['main/default/worker']);
    const none = (await call('GET', `${base(spaces.shop.id)}/deployments?namespace=nowhere`, { token: alice })).json;
    expect(none).toEqual({ data: [], next_cursor: null, total: 0 });
    expectError(await call('GET', `${base(spaces.shop.id)}/pods?vcluster=nope`, { token: alice }), 404, 'not_found');
    expectError(await call('GET', `${base(spaces.shop.id)}/pods?namespace=Not_A_Label`, { token: alice }), 400, 'validation_failed');
  });

  it('pages with limit and an opaque cursor, sorted by virtual cluster, namespace and name', async () => {
    const all = (await call('GET', `${base(spaces.shop.id)}/pods?limit=100`, { token: alice })).json.data.map(where);
    const paged = await walk(`${base(spaces.shop.id)}/pods`, 1);
    expect(paged.items.map(where)).toEqual(all);
    expect(paged.pages).toBe(4);
    expect(paged.totals).toEqual([4, 4, 4, 4]);
    const first = (await call('GET', `${base(spaces.shop.id)}/deployments?limit=2`, { token: alice })).json;
    expect(first.data.map(where)).toEqual(['main/default/worker', 'main/web/api']);
    const second = (await call('GET', `${base(spaces.shop.id)}/deployments?limit=2&cursor=${first.next_cursor}`, { token: alice })).json;
    expect(second).toEqual({ data: [expect.objectContaining({ vcluster: 'staging', name: 'api' })], next_cursor: null, total: 3 });
  });

  it('refuses bad paging input with the error envelope', async () => {
    const pods = (await call('GET', `${base(spaces.shop.id)}/pods?limit=1`, { token: alice })).json;
    expectError(await call('GET', `${base(spaces.shop.id)}/pods?limit=0`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${base(spaces.shop.id)}/pods?limit=101`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${base(spaces.shop.id)}/pods?cursor=not-a-cursor`, { token: alice }), 400, 'invalid_cursor');
    // A cursor belongs to its list: another view's, or the same view of another CloudSpace, is refused.
    expectError(await call('GET', `${base(spaces.shop.id)}/deployments?cursor=${pods.next_cursor}`, { token: alice }), 400, 'invalid_cursor');
    expectError(await call('GET', `${base(spaces.side.id)}/pods?cursor=${pods.next_cursor}`, { token: alice }), 400, 'invalid_cursor');
  });

  it('keeps other tenants out of every view and of logs, and needs scope read', async () => {
    const pod = (await call('GET', `${base(spaces.shop.id)}/pods?limit=1`, { token: alice })).json.data[0].name;
    for (const view of VIEWS) expectError(await call('GET', `${base(spaces.shop.id)}/${view}`, { token: bob }), 404, 'not_found');
    expectError(await call('GET', `${base(spaces.shop.id)}/logs/${pod}`, { token: bob }), 404, 'not_found');
    expectError(await call('GET', `${base(spaces.shop.id)}/logs/${pod}?follow=true`, { token: bob }), 404, 'not_found');
    expectError(await call('GET', `${base('00000000-0000-4000-8000-000000000000')}/pods`, { token: alice }), 404, 'not_found');
    const deployOnly = await stack.token({ subject: 'ci', tenantId: TENANT_A, scopes: ['deploy'] });
    expectError(await call('GET', `${base(spaces.shop.id)}/pods`, { token: deployOnly }), 403, 'forbidden');
    expectError(await call('GET', `${base(spaces.shop.id)}/logs/${pod}?follow=true`, { token: deployOnly }), 403, 'forbidden');
    expectError(await call('GET', `${base(spaces.shop.id)}/logs/${pod}?follow=true`), 401, 'unauthenticated');
  });

  it('answers through GraphQL with typed fields', async () => {
    const r = await call('POST', '/graphql', {
      token: alice,
      body: { query: /* GraphQL */ `query($id: ID!) { cloudSpaceServices(cloudSpaceId: $id, namespace: "web") { total data { name type ports { port targetPort } } } }`, variables: { id: spaces.shop.id } },
    });
    expect(r.json).toEqual({ data: { cloudSpaceServices: { total: 1, data: [{ name: 'api', type: 'ClusterIP', ports: [{ port: 80, targetPort: '8080' }] }] } } });
  });

  it('answers 503 upstream_unavailable while a virtual cluster cannot be reached', async () => {
    const staging = sim.virtualCluster(spaces.shop.namespace, 'staging')!;
    staging.setAvailable(false);
    try {
      const r = await call('GET', `${base(spaces.shop.id)}/pods`, { token: alice });
      expectError(r, 503, 'upstream_unavailable');
      expect(r.json.error.message).toMatch(/virtual cluster staging/);
      expect((await call('GET', `${base(spaces.shop.id)}/pods?vcluster=main`, { token: alice })).status).toBe(200);
    } finally {
      staging.setAvailable(true);
    }
    expect((await call('GET', `${base(spaces.shop.id)}/pods`, { token: alice })).status).toBe(200);
  });

  it('answers 409 conflict while the CloudSpace is not Ready', async () => {
    sim.setAvailable(false);
    try {
      const r = await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'later' } });
      expect(r.status).toBe(201);
      expectError(await call('GET', `${base(r.json.id)}/deployments`, { token: alice }), 409, 'conflict');
      expectError(await call('GET', `${base(r.json.id)}/logs/anything`, { token: alice }), 409, 'conflict');
      expectError(await call('GET', `${base(r.json.id)}/logs/anything?follow=true`, { token: alice }), 409, 'conflict');
    } finally {
      sim.setAvailable(true);
    }
  });
});

describe('pod logs', () => {
  let worker: string;
  let stagingPod: string;

  beforeAll(async () => {
    const pods = (await call('GET', `${base(spaces.shop.id)}/pods`, { token: alice })).json.data;
    worker = pods.find((p: { name: string }) => p.name.startsWith('worker-')).name;
    stagingPod = pods.find((p: { vcluster: string }) => p.vcluster === 'staging').name;
    // A few lines to read.
    await new Promise((resolve) => setTimeout(resolve, 500));
  });

  it('answers the last lines of a pod of the default virtual cluster', async () => {
    const r = await call('GET', `${base(spaces.shop.id)}/logs/${worker}?tail=3`, { token: alice });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ vcluster: 'main', namespace: 'default', pod: worker, container: 'worker', lines: [expect.any(String), expect.any(String), expect.any(String)] });
    expect(r.json.lines.every((line: string) => line.includes('INFO'))).toBe(true);
    const stamped = await call('GET', `${base(spaces.shop.id)}/logs/${worker}?tail=2&timestamps=true&since_seconds=60`, { token: alice });
    expect(stamped.json.lines).toHaveLength(2);
    for (const line of stamped.json.lines) expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z /);
    const none = await call('GET', `${base(spaces.shop.id)}/logs/${worker}?tail=0`, { token: alice });
    expect(none.json.lines).toEqual([]);
    const byDefault = await call('GET', `${base(spaces.shop.id)}/logs/${worker}`, { token: alice });
    expect(byDefault.json.lines.length).toBeGreaterThan(3);
    expect(byDefault.json.lines.length).toBeLessThanOrEqual(100);
  });

  it('reads any virtual cluster, namespace and container of the CloudSpace', async () => {
    const r = await call('GET', `${base(spaces.shop.id)}/logs/${stagingPod}?vcluster=staging&container=api&tail=1`, { token: alice });
    expect(r.json).toMatchObject({ vcluster: 'staging', namespace: 'default', pod: stagingPod, container: 'api' });
    expect(r.json.lines).toHaveLength(1);
    const webPod = (await call('GET', `${base(spaces.shop.id)}/pods?namespace=web&limit=1`, { token: alice })).json.data[0].name;
    expect((await call('GET', `${base(spaces.shop.id)}/logs/${webPod}?namespace=web&tail=1`, { token: alice })).json).toMatchObject({ namespace: 'web', container: 'api' });
  });

  it('refuses bad log input and unknown pods with the error envelope', async () => {
    const logs = `${base(spaces.shop.id)}/logs`;
    expectError(await call('GET', `${logs}/${worker}?tail=-1`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/${worker}?tail=10001`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/${worker}?tail=lots`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/${worker}?since_seconds=0`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/${worker}?container=sidecar`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/${worker}?tail=-1&follow=true`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/${worker}?follow=maybe`, { token: alice }), 400, 'validation_failed');
    expectError(await call('GET', `${logs}/no-such-pod`, { token: alice }), 404, 'not_found');
    expectError(await call('GET', `${logs}/no-such-pod?follow=true`, { token: alice }), 404, 'not_found');
    expectError(await call('GET', `${logs}/${worker}?vcluster=staging`, { token: alice }), 404, 'not_found');
    expectError(await call('GET', `${logs}/${worker}?vcluster=nope&follow=true`, { token: alice }), 404, 'not_found');
  });

  it('follows a log as a stream: lines arrive while the response is open, and leaving closes the upstream', async () => {
    const vcluster = sim.virtualCluster(spaces.shop.namespace, 'main')!.cluster;
    const idle = vcluster.streams.size;
    const controller = new AbortController();
    const response = await fetch(`${stack.base}${base(spaces.shop.id)}/logs/${worker}?follow=true&tail=1`, { headers: { authorization: `Bearer ${alice}` }, signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: { at: number; lines: number }[] = [];
    let text = '';
    while (text.split('\n').filter(Boolean).length < 5) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      text += decoder.decode(value, { stream: true });
      arrivals.push({ at: Date.now(), lines: text.split('\n').filter(Boolean).length });
      // Following: one request to the virtual cluster is open for this client.
      expect(vcluster.streams.size).toBe(idle + 1);
    }
    controller.abort();
    // tail=1 gave one line; the others were written after the request, one every 100 ms, and
    // came in chunks of their own while the response stayed open.
    expect(arrivals[0]!.lines).toBe(1);
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect(arrivals.at(-1)!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(200);
    for (const line of text.trim().split('\n')) expect(line).toMatch(/ INFO /);
    // At once: without the abort, the request to the virtual cluster lingers for seconds.
    await eventually(async () => vcluster.streams.size === idle, 'the follow to the virtual cluster closed', 3000);
  });

  it('ends the stream when the pod goes', async () => {
    const response = await fetch(`${stack.base}${base(spaces.shop.id)}/logs/${stagingPod}?follow=true&vcluster=staging&tail=1`, { headers: { authorization: `Bearer ${alice}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await sim.virtualCluster(spaces.shop.namespace, 'staging')!.kubeConfig().makeApiClient(CoreV1Api).deleteNamespacedPod({ name: stagingPod, namespace: 'default' });
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
  });
});
