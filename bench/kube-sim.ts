/**
 * `npm run bench -- kube-sim`: Kubernetes API operations per second against kube-sim through
 * @kubernetes/client-node, the way the platform calls it, against a bare baseline.
 *
 * Targets, each a closed loop of CONCURRENCY callers for BENCH_SECONDS:
 *   get             readNamespacedConfigMap of one ConfigMap;
 *   list            listNamespacedConfigMap of a namespace holding LISTED ConfigMaps;
 *   patch           a JSON merge patch changing one key of a ConfigMap (every call a real write:
 *                   new resourceVersion, history, watch fan-out to one open watch);
 *   baseline get    the same client call against a bare node:http server answering the same
 *                   ConfigMap's bytes, prepared in advance: what client-node and HTTP cost alone;
 *   baseline list   the same for the list.
 * kube-sim, the baseline server and the callers share this process (as in the platform's tests),
 * so the ratios say how much of a call's CPU kube-sim adds. Rounds are interleaved and their
 * order rotated; medians over ROUNDS are reported. Numbers are reported, not asserted.
 */
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch, type V1ConfigMap } from '@kubernetes/client-node';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startKubeSim } from '../kube-sim/index.js';
import { formatTable, machine, median, runBenchmark, say, writeResults, type Cleanup } from './harness.js';

const ROUNDS = 3;
const CONCURRENCY = 8;
const WARMUP_SECONDS = 1;
const LISTED = 50;
const NAMESPACE = 'bench';

type TargetName = 'get' | 'list' | 'patch' | 'baseline get' | 'baseline list';

interface LoopStats {
  ops: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** CONCURRENCY callers repeating `op` for `seconds`; any error fails the run. */
async function closedLoop(op: () => Promise<void>, seconds: number): Promise<LoopStats> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const caller = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      await op();
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, caller));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
  return { ops: latencies.length, perSecond: latencies.length / elapsed, p50Ms: pick(0.5), p99Ms: pick(0.99) };
}

/** A server answering every GET with `list` or `object` bytes, and PATCH with `object`, with no logic. */
async function startBaseline(object: string, list: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const body = req.method === 'GET' && (req.url ?? '').split('?')[0]!.endsWith('/configmaps') ? list : object;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

export async function run(): Promise<void> {
  return runBenchmark('kube-sim and the baseline server', measure);
}

async function measure(seconds: number, cleanup: Cleanup): Promise<void> {
  say(`starting kube-sim in this process (${CONCURRENCY} concurrent callers per target, ${ROUNDS} rounds of ${seconds} s, ${WARMUP_SECONDS} s warm-up each)`);
  const sim = await startKubeSim({ podReadyDelayMs: 0, nodes: 3 });
  cleanup.add('kube-sim', () => sim.stop());
  const kc = sim.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);

  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  for (let i = 0; i < LISTED; i += 1) {
    await core.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: { metadata: { name: `config-${String(i).padStart(3, '0')}`, labels: { app: 'bench', index: String(i) } }, data: { 'settings.json': JSON.stringify({ index: i, feature: 'x'.repeat(200) }) } },
    });
  }
  await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name: 'patched' }, data: { counter: '0' } } });
  // One open watch, as an informer of the platform would keep: patches fan out to it.
  let watched = 0;
  const watch = await new Watch(kc).watch(`/api/v1/namespaces/${NAMESPACE}/configmaps`, { fieldSelector: 'metadata.name=patched' }, () => (watched += 1), () => {});
  cleanup.add('the watch', async () => watch.abort());

  const objectBytes = await (await fetch(`${sim.url}/api/v1/namespaces/${NAMESPACE}/configmaps/config-000`)).text();
  const listBytes = await (await fetch(`${sim.url}/api/v1/namespaces/${NAMESPACE}/configmaps`)).text();
  const baseline = await startBaseline(objectBytes, listBytes);
  cleanup.add('the baseline server', () => new Promise((resolve) => baseline.server.close(() => resolve())));
  const baselineCore = kubeConfigFor(baseline.url).makeApiClient(CoreV1Api);
  say(`kube-sim at ${sim.url}, baseline at ${baseline.url}; ConfigMap ${objectBytes.length} B, list of ${LISTED + 1} ${listBytes.length} B`);

  const expectOne = (cm: V1ConfigMap) => {
    if (cm.metadata?.name !== 'config-000') throw new Error(`get answered ${cm.metadata?.name}`);
  };
  const expectList = (items: V1ConfigMap[]) => {
    if (items.length !== LISTED + 1) throw new Error(`list answered ${items.length} items, expected ${LISTED + 1}`);
  };
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  let counter = 0;
  const targets: Record<TargetName, () => Promise<void>> = {
    get: async () => expectOne(await core.readNamespacedConfigMap({ name: 'config-000', namespace: NAMESPACE })),
    list: async () => expectList((await core.listNamespacedConfigMap({ namespace: NAMESPACE })).items),
    patch: async () => {
      counter += 1;
      const value = String(counter);
      const cm = await core.patchNamespacedConfigMap({ name: 'patched', namespace: NAMESPACE, body: { data: { counter: value } } }, merge);
      if (cm.data?.counter !== value) throw new Error(`patch answered counter ${cm.data?.counter}, expected ${value}`);
    },
    'baseline get': async () => expectOne(await baselineCore.readNamespacedConfigMap({ name: 'config-000', namespace: NAMESPACE })),
    'baseline list': async () => expectList((await baselineCore.listNamespacedConfigMap({ namespace: NAMESPACE })).items),
  };
  // Every target answers right once before anything is measured.
  for (const op of Object.values(targets)) await op();

  const names = Object.keys(targets) as TargetName[];
  const runs = new Map<TargetName, LoopStats[]>(names.map((n) => [n, []]));
  const width = Math.max(...names.map((n) => n.length));
  for (let round = 1; round <= ROUNDS; round += 1) {
    const order = names.map((_, i) => names[(i + round - 1) % names.length]!);
    for (const name of order) {
      await closedLoop(targets[name], WARMUP_SECONDS);
      const stats = await closedLoop(targets[name], seconds);
      runs.get(name)!.push(stats);
      say(`round ${round}/${ROUNDS} ${name.padEnd(width)} ${stats.perSecond.toFixed(0)} ops/s, p50 ${stats.p50Ms} ms, p99 ${stats.p99Ms} ms`);
    }
  }

  const medianOf = (name: TargetName) => median(runs.get(name)!.map((r) => r.perSecond));
  const p99Of = (name: TargetName) => median(runs.get(name)!.map((r) => r.p99Ms));
  const ratio = (a: TargetName, b: TargetName) => medianOf(a) / medianOf(b);
  const rows = [['target', 'median ops/s', 'median p99 ms', 'ops/s by round'], ...names.map((n) => [n, medianOf(n).toFixed(0), p99Of(n).toFixed(2), runs.get(n)!.map((r) => r.perSecond.toFixed(0)).join(' / ')])];
  const notes = [
    `get / baseline get:    ${ratio('get', 'baseline get').toFixed(2)}x  (what kube-sim adds to a read: routing, lookup, cached JSON)`,
    `list / baseline list:  ${ratio('list', 'baseline list').toFixed(2)}x  (${LISTED + 1} items, selectors, sorting)`,
    `patch / baseline get:  ${ratio('patch', 'baseline get').toFixed(2)}x  (a real write: merge patch, validation, resourceVersion, history, watch event)`,
    `watch events received during the patch runs: ${watched}`,
    'client-node opens a new connection per call (its agent does not keep connections alive), for kube-sim and the baseline alike.',
  ];
  process.stdout.write(['', ...formatTable(rows, [0, 3]), '', ...notes, ''].join('\n'));
  if (watched < runs.get('patch')!.reduce((n, r) => n + r.ops, 0)) throw new Error(`the watch saw ${watched} events, fewer than the patches measured`);

  writeResults('kube-sim', {
    benchmark: 'kube-sim',
    seconds,
    rounds: ROUNDS,
    warmupSeconds: WARMUP_SECONDS,
    concurrency: CONCURRENCY,
    listedItems: LISTED + 1,
    targets: Object.fromEntries(names.map((n) => [n, { medianOpsPerSecond: medianOf(n), medianP99Ms: p99Of(n), runs: runs.get(n) }])),
    ratios: { getToBaseline: ratio('get', 'baseline get'), listToBaseline: ratio('list', 'baseline list'), patchToBaselineGet: ratio('patch', 'baseline get') },
    watchEvents: watched,
    machine: machine(),
  });
}
