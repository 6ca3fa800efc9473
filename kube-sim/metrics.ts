/**
 * `metrics.k8s.io/v1beta1`, as metrics-server serves it: PodMetrics for running pods and
 * NodeMetrics for the nodes, computed on request. Usage is plausible, not measured: a share of
 * each container's requests (or of a small default) that drifts slowly over time.
 */
import type { SimCluster } from './cluster.js';
import { isPodActive } from './controllers/ownership.js';
import { parseQuantity } from './quantity.js';
import { matchesLabels, type LabelSelector } from './selectors.js';
import { timestamp, type StoredObject } from './types.js';

const DEFAULT_CPU = 0.05;
const DEFAULT_MEMORY = 48 * 2 ** 20;
const SYSTEM_CPU = 0.15;
const SYSTEM_MEMORY = 700 * 2 ** 20;

function seed(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h / 2 ** 32;
}

/** Between 0 and 1, different per container, changing over minutes. */
function wave(key: string, now: number): number {
  const s = seed(key);
  return 0.5 + 0.5 * Math.sin(now / 60_000 + s * Math.PI * 2);
}

interface Usage {
  cpu: number;
  memory: number;
}

function containerUsage(pod: StoredObject, container: { name: string; resources?: { requests?: Record<string, string> } }, now: number): Usage {
  const requests = container.resources?.requests ?? {};
  const cpu = requests.cpu !== undefined ? parseQuantity(requests.cpu) : DEFAULT_CPU;
  const memory = requests.memory !== undefined ? parseQuantity(requests.memory) : DEFAULT_MEMORY;
  const w = wave(`${pod.metadata.uid}/${container.name}`, now);
  return { cpu: cpu * (0.1 + 0.5 * w), memory: memory * (0.3 + 0.4 * w) };
}

const cpuText = (cores: number) => `${Math.max(1, Math.round(cores * 1e9))}n`;
const memoryText = (bytes: number) => `${Math.max(1, Math.round(bytes / 1024))}Ki`;

function runningPods(cluster: SimCluster, namespace: string | undefined): StoredObject[] {
  return cluster.store.list('pods', namespace).filter((p) => isPodActive(p) && p.status?.phase === 'Running');
}

function podMetrics(pod: StoredObject, now: number): unknown {
  const containers = (pod.spec?.containers ?? []) as { name: string; resources?: { requests?: Record<string, string> } }[];
  return {
    metadata: {
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      creationTimestamp: timestamp(new Date(now)),
      ...(pod.metadata.labels ? { labels: pod.metadata.labels } : {}),
    },
    timestamp: timestamp(new Date(now - 5000)),
    window: '15s',
    containers: containers.map((c) => {
      const u = containerUsage(pod, c, now);
      return { name: c.name, usage: { cpu: cpuText(u.cpu), memory: memoryText(u.memory) } };
    }),
  };
}

export function listPodMetrics(cluster: SimCluster, namespace: string | undefined, selector: LabelSelector): unknown {
  const now = Date.now();
  const items = runningPods(cluster, namespace)
    .filter((p) => matchesLabels(selector, p.metadata.labels))
    .map((p) => podMetrics(p, now));
  return { kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items };
}

export function getPodMetrics(cluster: SimCluster, namespace: string, name: string): unknown | undefined {
  const pod = cluster.store.get('pods', namespace, name);
  if (!pod || pod.status?.phase !== 'Running') return undefined;
  return { kind: 'PodMetrics', apiVersion: 'metrics.k8s.io/v1beta1', ...(podMetrics(pod, Date.now()) as object) };
}

/** Usage per node name: the system's share plus its running pods', in one pass over the pods. */
function usageByNode(cluster: SimCluster, now: number): Map<string, Usage> {
  const out = new Map<string, Usage>();
  for (const pod of runningPods(cluster, undefined)) {
    const node = pod.spec?.nodeName as string | undefined;
    if (!node) continue;
    const total = out.get(node) ?? { cpu: SYSTEM_CPU, memory: SYSTEM_MEMORY };
    for (const c of pod.spec?.containers ?? []) {
      const u = containerUsage(pod, c, now);
      total.cpu += u.cpu;
      total.memory += u.memory;
    }
    out.set(node, total);
  }
  return out;
}

function nodeMetrics(node: StoredObject, usage: Usage | undefined, now: number): unknown {
  const u = usage ?? { cpu: SYSTEM_CPU, memory: SYSTEM_MEMORY };
  return {
    metadata: { name: node.metadata.name, creationTimestamp: timestamp(new Date(now)), ...(node.metadata.labels ? { labels: node.metadata.labels } : {}) },
    timestamp: timestamp(new Date(now - 5000)),
    window: '20s',
    usage: { cpu: cpuText(u.cpu), memory: memoryText(u.memory) },
  };
}

export function listNodeMetrics(cluster: SimCluster, selector: LabelSelector): unknown {
  const now = Date.now();
  const usage = usageByNode(cluster, now);
  const items = cluster.store
    .list('nodes', '')
    .filter((n) => matchesLabels(selector, n.metadata.labels))
    .map((n) => nodeMetrics(n, usage.get(n.metadata.name), now));
  return { kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {}, items };
}

export function getNodeMetrics(cluster: SimCluster, name: string): unknown | undefined {
  const node = cluster.store.get('nodes', '', name);
  if (!node) return undefined;
  const now = Date.now();
  return { kind: 'NodeMetrics', apiVersion: 'metrics.k8s.io/v1beta1', ...(nodeMetrics(node, usageByNode(cluster, now).get(name), now) as object) };
}
