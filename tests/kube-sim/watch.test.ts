/**
 * Watches through client-node's Watch and makeInformer: initial state, resuming from a
 * resourceVersion, selector transitions, BOOKMARKs, 410 Expired for a version older than the
 * kept history, and informers surviving the API server going away.
 */
import { makeInformer, Watch, type V1ConfigMap } from '@kubernetes/client-node';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { clients, eventually, sleep, type Clients } from './support.js';

let sim: KubeSim;
let api: Clients;

interface Seen {
  type: string;
  name?: string;
  rv?: string;
  object: { kind?: string; code?: number; reason?: string; metadata?: { name?: string; resourceVersion?: string; labels?: Record<string, string> } };
}

/** Opens a watch and collects its events until `stop()`. */
async function watch(path: string, query: Record<string, string | number | boolean | undefined>) {
  const events: Seen[] = [];
  let ended: unknown = 'open';
  const controller = await new Watch(sim.kubeConfig()).watch(
    path,
    query,
    (type, object) => events.push({ type, name: object?.metadata?.name, rv: object?.metadata?.resourceVersion, object }),
    (err) => {
      ended = err ?? null;
    },
  );
  return {
    events,
    ended: () => ended,
    stop: () => controller.abort(),
  };
}

beforeAll(async () => {
  sim = await startKubeSim({ podReadyDelayMs: 0, nodes: 1, bookmarkIntervalMs: 50, watchHistorySize: 8 });
  api = clients(sim.kubeConfig());
  await api.core.createNamespace({ body: { metadata: { name: 'w' } } });
});

afterAll(async () => {
  await sim.stop();
});

const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) => api.core.createNamespacedConfigMap({ namespace: 'w', body: { metadata: { name, labels }, data } });

it('starts a watch without resourceVersion with the current objects as ADDED, then streams changes', async () => {
  await cm('before');
  const w = await watch('/api/v1/namespaces/w/configmaps', {});
  await eventually(() => w.events.some((e) => e.name === 'before'), 'the initial ADDED');
  expect(w.events[0]).toMatchObject({ type: 'ADDED', name: 'before' });
  await cm('after');
  await api.core.patchNamespacedConfigMap({ name: 'after', namespace: 'w', body: [{ op: 'add', path: '/data', value: { k: 'v' } }] });
  await api.core.deleteNamespacedConfigMap({ name: 'after', namespace: 'w' });
  await eventually(() => w.events.some((e) => e.type === 'DELETED'), 'the DELETED event');
  expect(w.events.filter((e) => e.name === 'after').map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  // Every event carries a higher resourceVersion than the one before.
  const rvs = w.events.map((e) => Number(e.rv));
  expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
  expect(w.events[1]?.object.kind).toBe('ConfigMap');
  w.stop();
});

it('resumes from a list resourceVersion without replaying what the list had', async () => {
  const list = await api.core.listNamespacedConfigMap({ namespace: 'w' });
  await cm('resumed');
  const w = await watch('/api/v1/namespaces/w/configmaps', { resourceVersion: list.metadata?.resourceVersion });
  await eventually(() => w.events.length >= 1, 'the replayed change');
  await sleep(30);
  expect(w.events.map((e) => [e.type, e.name])).toEqual([['ADDED', 'resumed']]);
  w.stop();
});

it('sends ADDED and DELETED when an object starts or stops matching the label selector', async () => {
  await cm('flip', { team: 'red' });
  const w = await watch('/api/v1/namespaces/w/configmaps', { labelSelector: 'team=blue', resourceVersion: String((await api.core.listNamespacedConfigMap({ namespace: 'w' })).metadata?.resourceVersion) });
  const merge = { op: 'replace', path: '/metadata/labels/team' };
  await api.core.patchNamespacedConfigMap({ name: 'flip', namespace: 'w', body: [{ ...merge, value: 'blue' }] });
  await api.core.patchNamespacedConfigMap({ name: 'flip', namespace: 'w', body: [{ op: 'add', path: '/data', value: { x: '1' } }] });
  await api.core.patchNamespacedConfigMap({ name: 'flip', namespace: 'w', body: [{ ...merge, value: 'red' }] });
  await eventually(() => w.events.length >= 3, 'three events');
  expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  w.stop();
});

it('watches one object through a fieldSelector on metadata.name', async () => {
  await cm('single');
  await cm('other');
  const w = await watch('/api/v1/namespaces/w/configmaps', { fieldSelector: 'metadata.name=single' });
  await api.core.patchNamespacedConfigMap({ name: 'other', namespace: 'w', body: [{ op: 'add', path: '/data', value: { a: '1' } }] });
  await api.core.patchNamespacedConfigMap({ name: 'single', namespace: 'w', body: [{ op: 'add', path: '/data', value: { a: '1' } }] });
  await eventually(() => w.events.length >= 2, 'two events');
  expect(w.events.map((e) => [e.type, e.name])).toEqual([
    ['ADDED', 'single'],
    ['MODIFIED', 'single'],
  ]);
  w.stop();
});

it('sends BOOKMARK events with the current resourceVersion when asked', async () => {
  const w = await watch('/api/v1/namespaces/w/configmaps', { allowWatchBookmarks: true, resourceVersion: String((await api.core.listNamespacedConfigMap({ namespace: 'w' })).metadata?.resourceVersion) });
  await cm('bookmarked');
  const bookmark = await eventually(() => w.events.find((e) => e.type === 'BOOKMARK' && Number(e.rv) > 0), 'a BOOKMARK');
  expect(bookmark.object.kind).toBe('ConfigMap');
  const added = w.events.find((e) => e.name === 'bookmarked');
  await eventually(() => w.events.some((e) => e.type === 'BOOKMARK' && Number(e.rv) >= Number(added?.rv)), 'a BOOKMARK at or after the change');
  w.stop();
});

it('answers a resourceVersion older than the kept history with an ERROR event carrying 410 Expired', async () => {
  const old = (await api.core.listNamespacedConfigMap({ namespace: 'w' })).metadata?.resourceVersion;
  // More changes than the history keeps (watchHistorySize 8).
  for (let i = 0; i < 20; i += 1) await cm(`churn-${i}`);
  const w = await watch('/api/v1/namespaces/w/configmaps', { resourceVersion: old });
  await eventually(() => w.ended() !== 'open', 'the watch to end');
  expect(w.events).toHaveLength(1);
  expect(w.events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
});

it('keeps an informer in sync, and it relists after the API server comes back', async () => {
  const path = '/api/v1/namespaces/w/configmaps';
  let lists = 0;
  const informer = makeInformer(
    sim.kubeConfig(),
    path,
    () => {
      lists += 1;
      return api.core.listNamespacedConfigMap({ namespace: 'w', labelSelector: 'inf=yes' });
    },
    'inf=yes',
  );
  const added: string[] = [];
  const updated: string[] = [];
  const deleted: string[] = [];
  const errors: unknown[] = [];
  informer.on('add', (o: V1ConfigMap) => added.push(o.metadata!.name!));
  informer.on('update', (o: V1ConfigMap) => updated.push(o.metadata!.name!));
  informer.on('delete', (o: V1ConfigMap) => deleted.push(o.metadata!.name!));
  informer.on('error', (e) => errors.push(e));
  await cm('i1', { inf: 'yes' });
  await informer.start();
  expect(added).toEqual(['i1']);
  await cm('i2', { inf: 'yes' });
  await cm('not-mine', { inf: 'no' });
  await eventually(() => added.includes('i2'), 'the informer to see i2');
  await api.core.patchNamespacedConfigMap({ name: 'i1', namespace: 'w', body: [{ op: 'add', path: '/data', value: { v: '2' } }] });
  await eventually(() => updated.includes('i1'), 'the informer to see the update');
  await api.core.deleteNamespacedConfigMap({ name: 'i2', namespace: 'w' });
  await eventually(() => deleted.includes('i2'), 'the informer to see the delete');
  expect(informer.list('w').map((o) => o.metadata?.name)).toEqual(['i1']);

  // The API server goes away: the watch is cut and the informer reports an error.
  sim.setAvailable(false);
  await eventually(() => errors.length > 0, 'the informer error');
  sim.setAvailable(true);
  // More changes than the history keeps: the informer's resourceVersion expires (410 Expired),
  // and client-node relists.
  await cm('i3', { inf: 'yes' });
  for (let i = 0; i < 12; i += 1) await cm(`noise-${i}`, { inf: 'no' });
  await informer.start();
  await eventually(() => informer.list('w').some((o) => o.metadata?.name === 'i3'), 'the relisted informer to have i3');
  expect(added).toContain('i3');
  expect(lists).toBe(2);
  expect(added).not.toContain('not-mine');
  await informer.stop();
});

it('ends a watch after timeoutSeconds', async () => {
  const w = await watch('/api/v1/namespaces/w/configmaps', { timeoutSeconds: 1, resourceVersion: String((await api.core.listNamespacedConfigMap({ namespace: 'w' })).metadata?.resourceVersion) });
  await eventually(() => w.ended() !== 'open', 'the watch to end', 3000);
  expect(w.ended()).toBeNull();
});
