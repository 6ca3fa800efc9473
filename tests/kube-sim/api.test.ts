/**
 * kube-sim's REST API through @kubernetes/client-node: discovery, CRUD on core and custom
 * resources, metadata rules, selectors, the patch formats, the status and scale subresources,
 * Status errors, and the availability switch.
 */
import { PatchStrategy, setHeaderOptions, VersionApi, type V1ConfigMap, type V1Namespace } from '@kubernetes/client-node';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { clients, deploymentManifest, statusOf, type Clients } from './support.js';

let sim: KubeSim;
let api: Clients;

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);
const json = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

beforeAll(async () => {
  sim = await startKubeSim({ port: 0, podReadyDelayMs: 0, nodes: 2 });
  api = clients(sim.kubeConfig());
  await api.core.createNamespace({ body: { metadata: { name: 'team-a' } } });
});

afterAll(async () => {
  await sim.stop();
});

describe('discovery', () => {
  it('serves /version, /api, /apis and the resource lists', async () => {
    const version = await sim.kubeConfig().makeApiClient(VersionApi).getCode();
    expect(version.major).toBe('1');
    expect(version.gitVersion).toContain('kube-sim');

    const core = await api.core.getAPIResources();
    const pods = core.resources.find((r) => r.name === 'pods');
    expect(pods).toMatchObject({ kind: 'Pod', namespaced: true, singularName: 'pod' });
    expect(pods?.verbs).toEqual(expect.arrayContaining(['create', 'get', 'list', 'watch', 'patch', 'update', 'delete', 'deletecollection']));
    expect(core.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['namespaces', 'services', 'configmaps', 'secrets', 'events', 'serviceaccounts', 'resourcequotas', 'persistentvolumeclaims', 'nodes', 'pods/status', 'pods/log']));

    const groups = (await (await fetch(`${sim.url}/apis`)).json()) as { groups: { name: string; preferredVersion: { version: string } }[] };
    const names = groups.groups.map((g) => g.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'apps',
        'batch',
        'autoscaling',
        'networking.k8s.io',
        'apiextensions.k8s.io',
        'metrics.k8s.io',
        'cluster.x-k8s.io',
        'infrastructure.cluster.x-k8s.io',
        'kustomize.toolkit.fluxcd.io',
        'platform.cloudops.dev',
      ]),
    );
    const apps = (await (await fetch(`${sim.url}/apis/apps/v1`)).json()) as { resources: { name: string; kind: string }[] };
    expect(apps.resources.map((r) => r.name)).toEqual(expect.arrayContaining(['deployments', 'deployments/status', 'deployments/scale', 'replicasets']));
    const platform = (await (await fetch(`${sim.url}/apis/platform.cloudops.dev/v1alpha1`)).json()) as { resources: { name: string; kind: string; namespaced: boolean }[] };
    expect(platform.resources).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'platformapps', kind: 'PlatformApp', namespaced: true }), expect.objectContaining({ name: 'platformapps/status' })]));
  });

  it('answers 404 NotFound for an unknown group or resource', async () => {
    const response = await fetch(`${sim.url}/apis/nope.example.com/v1/things`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
  });
});

describe('create, read, update, delete', () => {
  it('fills uid, creationTimestamp, generation and resourceVersion from one counter', async () => {
    const a = await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'one' }, data: { k: 'v' } } });
    const b = await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'two' }, data: { k: 'v' } } });
    expect(a.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(a.metadata?.generation).toBe(1);
    expect(Number(b.metadata?.resourceVersion)).toBeGreaterThan(Number(a.metadata?.resourceVersion));
    const read = await api.core.readNamespacedConfigMap({ name: 'one', namespace: 'team-a' });
    expect(read.data).toEqual({ k: 'v' });
    expect(read.metadata?.resourceVersion).toBe(a.metadata?.resourceVersion);
  });

  it('names an object from generateName', async () => {
    const created = await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { generateName: 'gen-' }, data: {} } });
    expect(created.metadata?.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('refuses a second object of the same name with 409 AlreadyExists', async () => {
    await api.core.createNamespacedSecret({ namespace: 'team-a', body: { metadata: { name: 'dup' }, stringData: { password: 'x' } } });
    const status = await statusOf(api.core.createNamespacedSecret({ namespace: 'team-a', body: { metadata: { name: 'dup' } } }));
    expect(status).toMatchObject({ code: 409, reason: 'AlreadyExists', message: 'secrets "dup" already exists', details: { name: 'dup', kind: 'secrets' } });
  });

  it('stores stringData of a Secret as base64 data', async () => {
    const secret = await api.core.readNamespacedSecret({ name: 'dup', namespace: 'team-a' });
    expect(secret.data).toEqual({ password: Buffer.from('x').toString('base64') });
    expect(secret.type).toBe('Opaque');
  });

  it('answers 404 NotFound with details for a missing object', async () => {
    const status = await statusOf(api.apps.readNamespacedDeployment({ name: 'ghost', namespace: 'team-a' }));
    expect(status).toMatchObject({ code: 404, reason: 'NotFound', message: 'deployments.apps "ghost" not found', details: { name: 'ghost', group: 'apps', kind: 'deployments' } });
  });

  it('refuses a namespaced object in a namespace that does not exist', async () => {
    const status = await statusOf(api.core.createNamespacedConfigMap({ namespace: 'nowhere', body: { metadata: { name: 'x' } } }));
    expect(status).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "nowhere" not found' });
  });

  it('refuses a stale resourceVersion with 409 Conflict', async () => {
    const current = await api.core.readNamespacedConfigMap({ name: 'one', namespace: 'team-a' });
    const updated = await api.core.replaceNamespacedConfigMap({ name: 'one', namespace: 'team-a', body: { ...current, data: { k: 'v2' } } });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(Number(current.metadata?.resourceVersion));
    const status = await statusOf(api.core.replaceNamespacedConfigMap({ name: 'one', namespace: 'team-a', body: { ...current, data: { k: 'stale' } } }));
    expect(status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on configmaps "one": the object has been modified; please apply your changes to the latest version and try again',
      details: { name: 'one', kind: 'configmaps' },
    });
    const stalePatch = await statusOf(
      api.core.patchNamespacedConfigMap({ name: 'one', namespace: 'team-a', body: { metadata: { resourceVersion: current.metadata?.resourceVersion }, data: { k: 'p' } } }, merge),
    );
    expect(stalePatch).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  it('does not write (nor bump resourceVersion) when an update changes nothing', async () => {
    const current = await api.core.readNamespacedConfigMap({ name: 'one', namespace: 'team-a' });
    const again = await api.core.replaceNamespacedConfigMap({ name: 'one', namespace: 'team-a', body: current });
    expect(again.metadata?.resourceVersion).toBe(current.metadata?.resourceVersion);
  });

  it('bumps generation on spec changes only', async () => {
    const created = await api.apps.createNamespacedDeployment({ namespace: 'team-a', body: deploymentManifest('gen', 'team-a', { replicas: 1 }) });
    expect(created.metadata?.generation).toBe(1);
    const labelled = await api.apps.patchNamespacedDeployment({ name: 'gen', namespace: 'team-a', body: { metadata: { labels: { extra: 'yes' } } } }, merge);
    expect(labelled.metadata?.generation).toBe(1);
    const scaled = await api.apps.patchNamespacedDeployment({ name: 'gen', namespace: 'team-a', body: { spec: { replicas: 2 } } }, merge);
    expect(scaled.metadata?.generation).toBe(2);
  });

  it('refuses invalid names and missing required fields with 422 Invalid', async () => {
    const bad = await statusOf(api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'Bad_Name' } } }));
    expect(bad).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'Bad_Name', kind: 'ConfigMap' } });
    expect(bad.message).toContain('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain');
    expect(bad.details?.causes?.[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'metadata.name' });

    const nameless = await statusOf(api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: {} } }));
    expect(nameless).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(nameless.message).toContain('metadata.name: Required value: name or generateName is required');

    const noContainers = await statusOf(api.core.createNamespacedPod({ namespace: 'team-a', body: { metadata: { name: 'empty' }, spec: { containers: [] } } }));
    expect(noContainers).toMatchObject({ code: 422, reason: 'Invalid', message: 'Pod "empty" is invalid: spec.containers: Required value' });

    const mismatch = deploymentManifest('mismatch', 'team-a');
    mismatch.spec.template.metadata.labels = { app: 'other' };
    const selector = await statusOf(api.apps.createNamespacedDeployment({ namespace: 'team-a', body: mismatch }));
    expect(selector).toMatchObject({ code: 422, reason: 'Invalid', details: { group: 'apps', kind: 'Deployment' } });
    expect(selector.message).toContain('`selector` does not match template `labels`');

    const longNs = await statusOf(api.core.createNamespace({ body: { metadata: { name: 'a.b' } } }));
    expect(longNs.message).toContain('a lowercase RFC 1123 label');
  });

  it('answers 400 BadRequest when the body and the URL disagree, 405 for a verb a path does not take', async () => {
    const status = await statusOf(api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'x', namespace: 'default' } } }));
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest', message: 'the namespace of the provided object does not match the namespace sent on the request' });
    const response = await fetch(`${sim.url}/api/v1/namespaces/team-a/configmaps`, { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(405);
    expect(await response.json()).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
  });

  it('works on cluster-scoped objects', async () => {
    const nodes = await api.core.listNode();
    expect(nodes.items.map((n) => n.metadata?.name)).toEqual(['kube-sim-node-1', 'kube-sim-node-2']);
    expect(nodes.items[0]?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(nodes.items[0]?.status?.allocatable?.cpu).toBeDefined();
    const ns = await api.core.readNamespace({ name: 'team-a' });
    expect(ns.status?.phase).toBe('Active');
    expect(ns.metadata?.labels?.['kubernetes.io/metadata.name']).toBe('team-a');
  });

  it('gives every new namespace a default ServiceAccount', async () => {
    const sa = await (async () => {
      for (let i = 0; i < 100; i += 1) {
        const list = await api.core.listNamespacedServiceAccount({ namespace: 'team-a' });
        if (list.items.length) return list.items;
        await new Promise((r) => setTimeout(r, 10));
      }
      return [];
    })();
    expect(sa.map((s) => s.metadata?.name)).toEqual(['default']);
  });

  it('validates but does not store a dryRun=All create', async () => {
    const dry = await api.core.createNamespacedConfigMap({ namespace: 'team-a', dryRun: 'All', body: { metadata: { name: 'dry' }, data: { a: '1' } } });
    expect(dry.metadata?.uid).toBeDefined();
    expect((await statusOf(api.core.readNamespacedConfigMap({ name: 'dry', namespace: 'team-a' }))).code).toBe(404);
    const invalid = await statusOf(api.core.createNamespacedConfigMap({ namespace: 'team-a', dryRun: 'All', body: { metadata: { name: 'Dry' } } }));
    expect(invalid.code).toBe(422);
  });

  it('lists with limit and continue', async () => {
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: n, labels: { page: 'yes' } } } });
    const first = await api.core.listNamespacedConfigMap({ namespace: 'team-a', labelSelector: 'page', limit: 2 });
    expect(first.items.map((i) => i.metadata?.name)).toEqual(['p1', 'p2']);
    expect(first.metadata?.remainingItemCount).toBe(3);
    const second = await api.core.listNamespacedConfigMap({ namespace: 'team-a', labelSelector: 'page', limit: 2, _continue: first.metadata?._continue });
    expect(second.items.map((i) => i.metadata?.name)).toEqual(['p3', 'p4']);
    const third = await api.core.listNamespacedConfigMap({ namespace: 'team-a', labelSelector: 'page', limit: 2, _continue: second.metadata?._continue });
    expect(third.items.map((i) => i.metadata?.name)).toEqual(['p5']);
    expect(third.metadata?._continue).toBeUndefined();
  });

  it('leaves kind out of the items of a built-in list, as the API server does', async () => {
    const raw = (await (await fetch(`${sim.url}/api/v1/namespaces/team-a/configmaps`)).json()) as { kind: string; metadata: { resourceVersion: string }; items: { kind?: string }[] };
    expect(raw.kind).toBe('ConfigMapList');
    expect(Number(raw.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(raw.items[0]?.kind).toBeUndefined();
  });
});

describe('label and field selectors', () => {
  beforeAll(async () => {
    await api.core.createNamespace({ body: { metadata: { name: 'sel' } } });
    const make = (name: string, labels: Record<string, string>) => api.core.createNamespacedConfigMap({ namespace: 'sel', body: { metadata: { name, labels } } });
    await make('web-prod', { app: 'web', env: 'prod', tier: '1' });
    await make('web-dev', { app: 'web', env: 'dev' });
    await make('db-prod', { app: 'db', env: 'prod', tier: '3' });
    await make('bare', {});
  });

  const names = async (labelSelector?: string, fieldSelector?: string) =>
    (await api.core.listNamespacedConfigMap({ namespace: 'sel', labelSelector, fieldSelector })).items.map((i) => i.metadata?.name);

  it.each([
    ['app=web', ['web-dev', 'web-prod']],
    ['app==web', ['web-dev', 'web-prod']],
    ['app!=web', ['bare', 'db-prod']],
    ['env in (prod,staging)', ['db-prod', 'web-prod']],
    ['env notin (prod)', ['bare', 'web-dev']],
    ['tier', ['db-prod', 'web-prod']],
    ['!tier', ['bare', 'web-dev']],
    ['app=web,env=prod', ['web-prod']],
    ['tier>2', ['db-prod']],
  ])('labelSelector %s', async (selector, expected) => {
    expect(await names(selector)).toEqual(expected);
  });

  it('selects by metadata.name and metadata.namespace fields', async () => {
    expect(await names(undefined, 'metadata.name=web-dev')).toEqual(['web-dev']);
    expect(await names(undefined, 'metadata.name!=web-dev,metadata.namespace=sel')).toEqual(['bare', 'db-prod', 'web-prod']);
    const all = await api.core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=sel', labelSelector: 'app' });
    expect(all.items).toHaveLength(3);
  });

  it('answers 400 for a malformed selector', async () => {
    const status = await statusOf(api.core.listNamespacedConfigMap({ namespace: 'sel', labelSelector: 'app in web' }));
    expect(status).toMatchObject({ code: 400, reason: 'BadRequest' });
  });

  it('deletes a collection by label selector', async () => {
    await api.core.deleteCollectionNamespacedConfigMap({ namespace: 'sel', labelSelector: 'env=prod' });
    expect(await names()).toEqual(['bare', 'web-dev']);
  });
});

describe('patch', () => {
  let base: V1ConfigMap;
  beforeEach(async () => {
    await api.core.deleteCollectionNamespacedConfigMap({ namespace: 'team-a', fieldSelector: 'metadata.name=patchme' });
    base = await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'patchme', labels: { a: '1', b: '2' } }, data: { x: '1', y: '2' } } });
  });

  it('applies a JSON merge patch (RFC 7386): null removes, maps merge', async () => {
    const patched = await api.core.patchNamespacedConfigMap({ name: 'patchme', namespace: 'team-a', body: { metadata: { labels: { a: null, c: '3' } }, data: { y: 'two' } } }, merge);
    expect(patched.metadata?.labels).toEqual({ b: '2', c: '3' });
    expect(patched.data).toEqual({ x: '1', y: 'two' });
  });

  it('applies a JSON patch (RFC 6902), and refuses a failing test op with 422', async () => {
    const patched = await api.core.patchNamespacedConfigMap(
      {
        name: 'patchme',
        namespace: 'team-a',
        body: [
          { op: 'test', path: '/data/x', value: '1' },
          { op: 'replace', path: '/data/x', value: 'one' },
          { op: 'add', path: '/data/z', value: 'new' },
          { op: 'remove', path: '/data/y' },
          { op: 'copy', from: '/data/z', path: '/metadata/labels/copied' },
        ],
      },
      json,
    );
    expect(patched.data).toEqual({ x: 'one', z: 'new' });
    expect(patched.metadata?.labels?.copied).toBe('new');
    const failed = await statusOf(api.core.patchNamespacedConfigMap({ name: 'patchme', namespace: 'team-a', body: [{ op: 'test', path: '/data/x', value: 'nope' }] }, json));
    expect(failed).toMatchObject({ code: 422, reason: 'Invalid' });
    const missing = await statusOf(api.core.patchNamespacedConfigMap({ name: 'patchme', namespace: 'team-a', body: [{ op: 'remove', path: '/data/absent' }] }, json));
    expect(missing.code).toBe(422);
    void base;
  });

  it('merges Deployment containers by name, env by name and ports by containerPort (strategic merge patch)', async () => {
    const d = deploymentManifest('smp', 'team-a', { replicas: 0 });
    d.spec.template.spec.containers.push({ name: 'sidecar', image: 'busybox:1.36', ports: [{ containerPort: 9000 }], env: [] });
    await api.apps.createNamespacedDeployment({ namespace: 'team-a', body: d });
    const patched = await api.apps.patchNamespacedDeployment(
      {
        name: 'smp',
        namespace: 'team-a',
        body: {
          spec: {
            template: {
              spec: {
                containers: [{ name: 'app', image: 'nginx:1.26', env: [{ name: 'EXTRA', value: 'x' }, { name: 'MODE', value: 'two' }], ports: [{ containerPort: 8443 }] }],
              },
            },
          },
        },
      },
      strategic,
    );
    const containers = patched.spec?.template.spec?.containers ?? [];
    expect(containers.map((c) => c.name)).toEqual(['app', 'sidecar']);
    expect(containers[0]?.image).toBe('nginx:1.26');
    expect(containers[0]?.env).toEqual([
      { name: 'MODE', value: 'two' },
      { name: 'EXTRA', value: 'x' },
    ]);
    expect(containers[0]?.ports?.map((p) => p.containerPort)).toEqual([8080, 8443]);
    expect(containers[1]?.image).toBe('busybox:1.36');

    const removed = await api.apps.patchNamespacedDeployment(
      { name: 'smp', namespace: 'team-a', body: { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } } },
      strategic,
    );
    expect(removed.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['app']);
  });

  it('creates with server-side apply, then merges onto the object; fieldManager is required', async () => {
    const manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: 'team-a' }, data: { a: '1' } };
    const created = await api.core.patchNamespacedConfigMap({ name: 'applied', namespace: 'team-a', body: manifest, fieldManager: 'tests' }, apply);
    expect(created.data).toEqual({ a: '1' });
    const again = await api.core.patchNamespacedConfigMap({ name: 'applied', namespace: 'team-a', body: { ...manifest, data: { a: '2', b: '3' } }, fieldManager: 'tests', force: true }, apply);
    expect(again.data).toEqual({ a: '2', b: '3' });
    expect(again.metadata?.uid).toBe(created.metadata?.uid);
    const noManager = await statusOf(api.core.patchNamespacedConfigMap({ name: 'applied', namespace: 'team-a', body: manifest }, apply));
    expect(noManager).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  it('drops on re-apply what the same field manager no longer applies, and keeps what others set', async () => {
    const manifest = (env: { name: string; value: string }[], labels: { app: string; tier?: string }) => {
      const d = deploymentManifest('applied-web', 'team-a', { replicas: 0 });
      d.metadata.labels = labels;
      d.spec.template.spec.containers[0]!.env = env;
      return d;
    };
    await api.apps.patchNamespacedDeployment(
      { name: 'applied-web', namespace: 'team-a', body: manifest([{ name: 'A', value: '1' }, { name: 'B', value: '2' }], { app: 'applied-web', tier: 'web' }), fieldManager: 'gitops' },
      apply,
    );
    await api.apps.patchNamespacedDeployment({ name: 'applied-web', namespace: 'team-a', body: { metadata: { labels: { owner: 'someone-else' } } } }, merge);
    const second = await api.apps.patchNamespacedDeployment(
      { name: 'applied-web', namespace: 'team-a', body: manifest([{ name: 'A', value: '1' }], { app: 'applied-web' }), fieldManager: 'gitops' },
      apply,
    );
    expect(second.spec?.template.spec?.containers[0]?.env).toEqual([{ name: 'A', value: '1' }]);
    expect(second.metadata?.labels).toEqual({ app: 'applied-web', owner: 'someone-else' });
  });

  it('patches through KubernetesObjectApi with a chosen PatchStrategy, and applies custom resources', async () => {
    const patched = await api.objects.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patchme', namespace: 'team-a' }, data: { x: 'via-objects' } } as V1ConfigMap,
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    expect((patched as V1ConfigMap).data).toEqual({ x: 'via-objects', y: '2' });

    const app = { apiVersion: 'platform.cloudops.dev/v1alpha1', kind: 'PlatformApp', metadata: { name: 'shop', namespace: 'team-a' }, spec: { image: 'shop:1' } };
    const applied = await api.objects.patch(app, undefined, undefined, 'platform', true, PatchStrategy.ServerSideApply);
    expect((applied as { metadata: { uid?: string } }).metadata.uid).toBeDefined();
    const read = await api.objects.read({ apiVersion: app.apiVersion, kind: app.kind, metadata: { name: 'shop', namespace: 'team-a' } });
    expect((read as unknown as { spec: unknown }).spec).toEqual({ image: 'shop:1' });
  });

  it('refuses a strategic merge patch on a custom resource with 415, as the API server does', async () => {
    await api.custom.createNamespacedCustomObject({ group: 'platform.cloudops.dev', version: 'v1alpha1', namespace: 'team-a', plural: 'platformapps', body: { apiVersion: 'platform.cloudops.dev/v1alpha1', kind: 'PlatformApp', metadata: { name: 'smp-cr' }, spec: {} } });
    const status = await statusOf(
      api.custom.patchNamespacedCustomObject({ group: 'platform.cloudops.dev', version: 'v1alpha1', namespace: 'team-a', plural: 'platformapps', name: 'smp-cr', body: { spec: { a: 1 } } }, strategic),
    );
    expect(status).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
  });
});

describe('status subresource', () => {
  it('changes only status through /status, and keeps status on main writes', async () => {
    const group = 'platform.cloudops.dev';
    const base = { group, version: 'v1alpha1', namespace: 'team-a', plural: 'platformapps' };
    const created = (await api.custom.createNamespacedCustomObject({ ...base, body: { apiVersion: `${group}/v1alpha1`, kind: 'PlatformApp', metadata: { name: 'stat' }, spec: { replicas: 1 }, status: { phase: 'Ignored' } } })) as {
      status?: unknown;
      metadata: { generation: number };
    };
    expect(created.status).toBeUndefined();
    const withStatus = (await api.custom.patchNamespacedCustomObjectStatus({ ...base, name: 'stat', body: { status: { phase: 'Ready' }, spec: { replicas: 9 } } }, merge)) as {
      status: { phase: string };
      spec: { replicas: number };
      metadata: { generation: number };
    };
    expect(withStatus.status).toEqual({ phase: 'Ready' });
    expect(withStatus.spec.replicas).toBe(1);
    expect(withStatus.metadata.generation).toBe(1);
    const main = (await api.custom.patchNamespacedCustomObject({ ...base, name: 'stat', body: { spec: { replicas: 2 }, status: { phase: 'Overwritten' } } }, merge)) as {
      status: { phase: string };
      spec: { replicas: number };
      metadata: { generation: number };
    };
    expect(main.status).toEqual({ phase: 'Ready' });
    expect(main.spec.replicas).toBe(2);
    expect(main.metadata.generation).toBe(2);
    const replaced = (await api.custom.replaceNamespacedCustomObjectStatus({ ...base, name: 'stat', body: { ...main, status: { phase: 'Done' } } })) as { status: { phase: string } };
    expect(replaced.status.phase).toBe('Done');
  });

  it('reads and writes the scale subresource of a Deployment', async () => {
    await api.apps.createNamespacedDeployment({ namespace: 'team-a', body: deploymentManifest('scaled', 'team-a', { replicas: 1 }) });
    const scale = await api.apps.readNamespacedDeploymentScale({ name: 'scaled', namespace: 'team-a' });
    expect(scale.spec?.replicas).toBe(1);
    expect(scale.status?.selector).toBe('app=scaled');
    await api.apps.patchNamespacedDeploymentScale({ name: 'scaled', namespace: 'team-a', body: { spec: { replicas: 3 } } }, merge);
    expect((await api.apps.readNamespacedDeployment({ name: 'scaled', namespace: 'team-a' })).spec?.replicas).toBe(3);
  });
});

describe('custom resource definitions', () => {
  it('serves the kinds of a CRD once it is created, and removes them with it', async () => {
    const kc = sim.kubeConfig();
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    const created = await api.objects.create(crd);
    expect((created as unknown as { status: { conditions: { type: string; status: string }[] } }).status.conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Established', status: 'True' })]),
    );
    await api.custom.createClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets', body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' }, size: 3 } });
    const list = (await api.custom.listClusterCustomObject({ group: 'example.com', version: 'v1', plural: 'widgets' })) as { kind: string; items: { kind: string; size: number }[] };
    expect(list.kind).toBe('WidgetList');
    expect(list.items).toEqual([expect.objectContaining({ kind: 'Widget', size: 3 })]);
    // A fresh client discovers the new kind.
    const fresh = clients(kc).objects;
    const read = await fresh.read({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w1' } });
    expect(read.metadata?.name).toBe('w1');

    await api.objects.delete(crd);
    const gone = await fetch(`${sim.url}/apis/example.com/v1/widgets`);
    expect(gone.status).toBe(404);
  });

  it('refuses a CRD whose name is not plural.group', async () => {
    const status = await statusOf(
      api.objects.create({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'wrong.example.com' },
        spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Gadget', plural: 'gadgets' }, versions: [{ name: 'v1', served: true, storage: true }] },
      } as never),
    );
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
  });
});

describe('deletion', () => {
  it('deletes a namespace with everything in it', async () => {
    await api.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await api.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c' } } });
    await api.apps.createNamespacedDeployment({ namespace: 'doomed', body: deploymentManifest('d', 'doomed', { replicas: 1 }) });
    await api.custom.createNamespacedCustomObject({ group: 'platform.cloudops.dev', version: 'v1alpha1', namespace: 'doomed', plural: 'platformapps', body: { apiVersion: 'platform.cloudops.dev/v1alpha1', kind: 'PlatformApp', metadata: { name: 'p' } } });
    // The API server answers with the Namespace (client-node reads it as a V1Status).
    const raw = (await (await fetch(`${sim.url}/api/v1/namespaces/doomed`, { method: 'DELETE' })).json()) as V1Namespace;
    expect(raw).toMatchObject({ kind: 'Namespace', metadata: { name: 'doomed' } });
    expect((await statusOf(api.core.readNamespace({ name: 'doomed' }))).code).toBe(404);
    expect((await api.core.listConfigMapForAllNamespaces({ fieldSelector: 'metadata.namespace=doomed' })).items).toHaveLength(0);
    expect((await api.apps.listDeploymentForAllNamespaces({ fieldSelector: 'metadata.namespace=doomed' })).items).toHaveLength(0);
    expect((await api.core.listPodForAllNamespaces({ fieldSelector: 'metadata.namespace=doomed' })).items).toHaveLength(0);
    const apps = (await api.custom.listCustomObjectForAllNamespaces({ group: 'platform.cloudops.dev', version: 'v1alpha1', plural: 'platformapps', fieldSelector: 'metadata.namespace=doomed' })) as { items: unknown[] };
    expect(apps.items).toHaveLength(0);
  });

  it('keeps an object with finalizers until the last one is removed', async () => {
    await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    await api.core.deleteNamespacedConfigMap({ name: 'held', namespace: 'team-a' });
    const held = await api.core.readNamespacedConfigMap({ name: 'held', namespace: 'team-a' });
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await api.core.patchNamespacedConfigMap({ name: 'held', namespace: 'team-a', body: { metadata: { finalizers: null } } }, merge);
    expect((await statusOf(api.core.readNamespacedConfigMap({ name: 'held', namespace: 'team-a' }))).code).toBe(404);
  });

  it('answers a delete with a Success Status and refuses a failed precondition', async () => {
    const cm = await api.core.createNamespacedConfigMap({ namespace: 'team-a', body: { metadata: { name: 'pre' } } });
    const refused = await statusOf(api.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'team-a', body: { preconditions: { resourceVersion: '1' } } }));
    expect(refused).toMatchObject({ code: 409, reason: 'Conflict' });
    const answer = await api.core.deleteNamespacedConfigMap({ name: 'pre', namespace: 'team-a', body: { preconditions: { uid: cm.metadata?.uid } } });
    expect(answer).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'pre', kind: 'configmaps' } });
  });
});

describe('availability and authentication', () => {
  it('answers 503 while set unavailable, and works again afterwards', async () => {
    sim.setAvailable(false);
    const status = await statusOf(api.core.listNamespace());
    expect(status).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
    sim.setAvailable(true);
    expect((await api.core.listNamespace()).items.length).toBeGreaterThan(0);
  });

  it('resets connections in reset mode', async () => {
    sim.setAvailable(false, { mode: 'reset' });
    await expect(api.core.listNamespace()).rejects.toThrow();
    sim.setAvailable(true);
    expect((await api.core.listNamespace()).items.length).toBeGreaterThan(0);
  });

  it('requires the configured token on the host cluster (401 Unauthorized Status otherwise)', async () => {
    const guarded = await startKubeSim({ token: 'sekret-token', podReadyDelayMs: 0, nodes: 1 });
    try {
      const ok = await clients(guarded.kubeConfig()).core.listNamespace();
      expect(ok.items.length).toBeGreaterThan(0);
      const anonymous = await fetch(`${guarded.url}/api/v1/namespaces`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      const wrong = await fetch(`${guarded.url}/api/v1/namespaces`, { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
      expect((await fetch(`${guarded.url}/version`)).status).toBe(200);
    } finally {
      await guarded.stop();
    }
  });

  it('refuses options that make no sense before starting', async () => {
    await expect(startKubeSim({ podReadyDelayMs: -1 })).rejects.toThrow('kube-sim: option podReadyDelayMs must be an integer');
    await expect(startKubeSim({ progressDeadlineFactor: 0 })).rejects.toThrow('progressDeadlineFactor');
  });
});
