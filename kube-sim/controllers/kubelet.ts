/**
 * The scheduler and kubelet of the simulation: a new pod is assigned a node (round robin), its
 * images are "pulled" and its containers "started" after `podReadyDelayMs`, then it is Ready.
 * Containers print a few lines at start and one every `logIntervalMs`.
 *
 * Failure triggers, by image tag (the part after the last `:`):
 *   `fail`, `fail-*`    the pull fails: container waiting `ImagePullBackOff`, pod Pending,
 *                       events `Failed` (ErrImagePull, ImagePullBackOff) and `BackOff`;
 *   `crash`, `crash-*`  the container starts and exits with code 1 every `crashLoopIntervalMs`:
 *                       waiting `CrashLoopBackOff`, `restartCount` rising, event `BackOff`
 *                       (with restartPolicy Never the pod goes Failed instead).
 */
import { createHash } from 'node:crypto';
import type { SimCluster } from '../cluster.js';
import { parseQuantity } from '../quantity.js';
import { timestamp, type StoredObject } from '../types.js';
import { WorkQueue } from '../timers.js';
import { keyOf, setCondition, splitKey, type Condition } from './ownership.js';
import type { Controller } from './index.js';

export type ImageBehaviour = 'ok' | 'fail' | 'crash';

/** The tag of an image reference (`nginx:1.25` → `1.25`; no tag → `latest`; digests → ''). */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  if (at >= 0) return '';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon >= 0 ? last.slice(colon + 1) : 'latest';
}

export function imageBehaviour(image: string): ImageBehaviour {
  const tag = imageTag(image);
  if (tag === 'fail' || tag.startsWith('fail-')) return 'fail';
  if (tag === 'crash' || tag.startsWith('crash-')) return 'crash';
  return 'ok';
}

type ContainerState = 'creating' | 'running' | 'image-backoff' | 'crash-backoff' | 'terminated';

interface ContainerRun {
  name: string;
  image: string;
  behaviour: ImageBehaviour;
  port: number | undefined;
  state: ContainerState;
  restarts: number;
  /** Which periodic line comes next (starting anywhere, so pods do not all print alike). */
  printed: number;
  startedAt?: string;
  containerId: string;
  lastTerminated?: { exitCode: number; reason: string; startedAt: string; finishedAt: string; containerID: string };
}

interface PodRun {
  uid: string;
  namespace: string;
  name: string;
  node: string;
  hostIP: string;
  podIP: string;
  startTime: string;
  restartPolicy: string;
  started: boolean;
  containers: ContainerRun[];
  conditions: Condition[];
}

const LOG_MESSAGES = ['GET / 200 3ms', 'GET /healthz 200 1ms', 'GET /api/items 200 12ms', 'POST /api/items 201 18ms', 'worker: queue drained, 0 jobs pending', 'GET /metrics 200 2ms'];

function qosClass(spec: { containers?: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }[] }): string {
  const containers = spec.containers ?? [];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const requests = c.resources?.requests ?? {};
    const limits = c.resources?.limits ?? {};
    if (Object.keys(requests).length || Object.keys(limits).length) any = true;
    for (const r of ['cpu', 'memory']) {
      const limit = limits[r];
      const request = requests[r] ?? limit;
      if (limit === undefined || request === undefined || parseQuantity(request) !== parseQuantity(limit)) guaranteed = false;
    }
  }
  return guaranteed ? 'Guaranteed' : any ? 'Burstable' : 'BestEffort';
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

export function startKubelet(cluster: SimCluster): Controller {
  const pods = cluster.type('pods');
  const nodes = cluster.type('nodes');
  const runs = new Map<string, PodRun>();
  let nextNode = 0;
  const { podReadyDelayMs, crashLoopIntervalMs, logIntervalMs } = cluster.options;
  const queue = new WorkQueue('kubelet', cluster.timers, cluster.logger, start);

  const unsubscribe = cluster.store.subscribe((change) => {
    if (change.storageKey !== 'pods') return;
    if (change.type === 'ADDED') queue.add(keyOf(change.object));
    else if (change.type === 'DELETED') forget(change.object.metadata.uid);
  });

  const stopTicker =
    logIntervalMs > 0
      ? cluster.timers.every(logIntervalMs, () => {
          for (const run of runs.values()) {
            for (const c of run.containers) {
              if (c.state !== 'running' || c.behaviour !== 'ok') continue;
              c.printed += 1;
              cluster.logs.write(run.namespace, run.name, c.name, `${timestamp()} INFO ${LOG_MESSAGES[c.printed % LOG_MESSAGES.length]}`);
            }
          }
        })
      : () => {};

  function forget(uid: string): void {
    runs.delete(uid);
    for (const suffix of ['start', 'crash', 'backoff']) cluster.timers.cancel(`pod:${uid}:${suffix}`);
  }

  function current(run: PodRun): StoredObject | undefined {
    const pod = cluster.find(pods, run.namespace, run.name);
    return pod && pod.metadata.uid === run.uid ? pod : undefined;
  }

  function pickNode(): StoredObject | undefined {
    const ready = cluster.store
      .list('nodes', '')
      .filter((n) => !n.spec?.unschedulable)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    if (ready.length === 0) return undefined;
    nextNode = (nextNode + 1) % ready.length;
    return ready[nextNode];
  }

  function start(key: string): void {
    const [namespace, name] = splitKey(key);
    let pod = cluster.find(pods, namespace, name);
    if (!pod || runs.has(pod.metadata.uid) || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return;
    const now = timestamp();
    const node = pod.spec?.nodeName ? cluster.find(nodes, '', pod.spec.nodeName) : pickNode();
    if (!node) {
      cluster.mutate(
        pods,
        namespace,
        name,
        (draft) => {
          draft.status = {
            ...draft.status,
            phase: 'Pending',
            conditions: setCondition(draft.status?.conditions, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/0 nodes are available: no nodes available to schedule pods.' }, now),
          };
        },
        { status: true },
      );
      cluster.events.record(pod, 'Warning', 'FailedScheduling', '0/0 nodes are available: no nodes available to schedule pods.', 'default-scheduler');
      return;
    }
    if (!pod.spec?.nodeName) {
      pod = cluster.mutate(pods, namespace, name, (draft) => {
        draft.spec.nodeName = node.metadata.name;
      })!;
      cluster.events.record(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${node.metadata.name}`, 'default-scheduler');
    }
    const hostIP = (node.status?.addresses as { type: string; address: string }[] | undefined)?.find((a) => a.type === 'InternalIP')?.address ?? '172.18.0.2';
    const run: PodRun = {
      uid: pod.metadata.uid,
      namespace,
      name,
      node: node.metadata.name,
      hostIP,
      podIP: cluster.allocatePodIp(),
      startTime: now,
      restartPolicy: pod.spec?.restartPolicy ?? 'Always',
      started: false,
      containers: ((pod.spec?.containers ?? []) as { name: string; image: string; ports?: { containerPort: number }[] }[]).map((c) => ({
        name: c.name,
        image: c.image,
        behaviour: imageBehaviour(c.image),
        port: c.ports?.[0]?.containerPort,
        state: 'creating',
        restarts: 0,
        printed: Math.floor(Math.random() * LOG_MESSAGES.length),
        containerId: digest(`${pod!.metadata.uid}/${c.name}/0`),
      })),
      conditions: [],
    };
    runs.set(run.uid, run);
    run.conditions = setCondition(run.conditions, { type: 'PodScheduled', status: 'True' }, now);
    run.conditions = setCondition(run.conditions, { type: 'Initialized', status: 'True' }, now);
    for (const c of run.containers) cluster.events.record(pod, 'Normal', 'Pulling', `Pulling image "${c.image}"`, 'kubelet');
    writeStatus(run);
    cluster.timers.afterKeyed(`pod:${run.uid}:start`, podReadyDelayMs, () => startContainers(run));
  }

  function startContainers(run: PodRun): void {
    const pod = current(run);
    if (!pod) return;
    run.started = true;
    const now = timestamp();
    for (const c of run.containers) {
      if (c.behaviour === 'fail') {
        c.state = 'image-backoff';
        const why = `Failed to pull image "${c.image}": rpc error: code = NotFound desc = failed to pull and unpack image "${c.image}": not found (kube-sim: the image tag asks for a pull failure)`;
        cluster.events.record(pod, 'Warning', 'Failed', why, 'kubelet');
        cluster.events.record(pod, 'Warning', 'Failed', 'Error: ErrImagePull', 'kubelet');
        backOffPulling(pod, c);
        continue;
      }
      cluster.events.record(pod, 'Normal', 'Pulled', `Successfully pulled image "${c.image}" in 412ms (412ms including waiting)`, 'kubelet');
      runContainer(run, pod, c, now);
    }
    writeStatus(run);
    if (run.containers.some((c) => c.behaviour === 'fail')) {
      cluster.timers.afterKeyed(`pod:${run.uid}:backoff`, crashLoopIntervalMs, function again() {
        const p = current(run);
        if (!p) return;
        for (const c of run.containers) if (c.state === 'image-backoff') backOffPulling(p, c);
        cluster.timers.afterKeyed(`pod:${run.uid}:backoff`, crashLoopIntervalMs, again);
      });
    }
    if (run.containers.some((c) => c.behaviour === 'crash')) cluster.timers.afterKeyed(`pod:${run.uid}:crash`, crashLoopIntervalMs, () => crash(run));
  }

  function backOffPulling(pod: StoredObject, c: ContainerRun): void {
    cluster.events.record(pod, 'Normal', 'BackOff', `Back-off pulling image "${c.image}"`, 'kubelet');
    cluster.events.record(pod, 'Warning', 'Failed', 'Error: ImagePullBackOff', 'kubelet');
  }

  function runContainer(run: PodRun, pod: StoredObject, c: ContainerRun, now: string): void {
    c.state = 'running';
    c.startedAt = now;
    cluster.events.record(pod, 'Normal', 'Created', `Created container ${c.name}`, 'kubelet');
    cluster.events.record(pod, 'Normal', 'Started', `Started container ${c.name}`, 'kubelet');
    const log = (text: string) => cluster.logs.write(run.namespace, run.name, c.name, `${timestamp()} ${text}`);
    log(`INFO starting ${c.name} (image ${c.image}) on ${run.node}`);
    if (c.behaviour === 'crash') {
      log(`INFO loading configuration`);
      return;
    }
    log(`INFO listening on 0.0.0.0:${c.port ?? 8080}`);
    log('INFO ready to accept connections');
  }

  /** Every crashing container exits and is restarted; the pod shows CrashLoopBackOff. */
  function crash(run: PodRun): void {
    const pod = current(run);
    if (!pod) return;
    const now = timestamp();
    for (const c of run.containers) {
      if (c.behaviour !== 'crash' || c.state === 'terminated') continue;
      const log = (text: string) => cluster.logs.write(run.namespace, run.name, c.name, `${timestamp()} ${text}`);
      if (c.state === 'crash-backoff') {
        // The restart after the back-off: a new attempt that crashes again.
        c.restarts += 1;
        c.containerId = digest(`${run.uid}/${c.name}/${c.restarts}`);
        log(`INFO starting ${c.name} (image ${c.image}) on ${run.node}, restart ${c.restarts}`);
        cluster.events.record(pod, 'Normal', 'Started', `Started container ${c.name}`, 'kubelet');
      }
      log('ERROR simulated crash: the image tag asks for one (kube-sim)');
      c.lastTerminated = { exitCode: 1, reason: 'Error', startedAt: c.startedAt ?? now, finishedAt: now, containerID: `containerd://${c.containerId}` };
      c.startedAt = now;
      if (run.restartPolicy === 'Never') {
        c.state = 'terminated';
        continue;
      }
      c.state = 'crash-backoff';
      cluster.events.record(pod, 'Warning', 'BackOff', `Back-off restarting failed container ${c.name} in pod ${run.name}_${run.namespace}(${run.uid})`, 'kubelet');
    }
    writeStatus(run);
    if (run.containers.some((c) => c.state === 'crash-backoff')) cluster.timers.afterKeyed(`pod:${run.uid}:crash`, crashLoopIntervalMs, () => crash(run));
  }

  function containerStatus(run: PodRun, c: ContainerRun): unknown {
    const repo = c.image.includes('/') ? c.image : `docker.io/library/${c.image}`;
    const everStarted = c.state === 'running' || c.state === 'crash-backoff' || c.state === 'terminated';
    let state: unknown;
    switch (c.state) {
      case 'creating':
        state = { waiting: { reason: 'ContainerCreating' } };
        break;
      case 'running':
        state = { running: { startedAt: c.startedAt } };
        break;
      case 'image-backoff':
        state = { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` } };
        break;
      case 'crash-backoff': {
        const backOff = Math.min(300, 10 * 2 ** Math.min(c.restarts, 5));
        state = { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${backOff}s restarting failed container=${c.name} pod=${run.name}_${run.namespace}(${run.uid})` } };
        break;
      }
      case 'terminated':
        state = { terminated: c.lastTerminated };
        break;
    }
    return {
      name: c.name,
      image: c.image,
      imageID: everStarted ? `${repo.split(':')[0]}@sha256:${digest(c.image)}` : '',
      ...(everStarted ? { containerID: `containerd://${c.containerId}` } : {}),
      ready: c.state === 'running' && c.behaviour === 'ok',
      started: c.state === 'running',
      restartCount: c.restarts,
      state,
      lastState: c.lastTerminated && c.state !== 'terminated' ? { terminated: c.lastTerminated } : {},
    };
  }

  function writeStatus(run: PodRun): void {
    const pod = current(run);
    if (!pod) return;
    const now = timestamp();
    const notReady = run.containers.filter((c) => !(c.state === 'running' && c.behaviour === 'ok')).map((c) => c.name);
    const readiness: Condition = notReady.length
      ? { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: [${notReady.join(' ')}]` }
      : { type: 'Ready', status: 'True' };
    run.conditions = setCondition(run.conditions, { type: 'PodReadyToStartContainers', status: run.started ? 'True' : 'False' }, now);
    run.conditions = setCondition(run.conditions, readiness, now);
    run.conditions = setCondition(run.conditions, { ...readiness, type: 'ContainersReady' }, now);
    const started = run.containers.some((c) => c.state === 'running' || c.state === 'crash-backoff');
    const failed = run.containers.length > 0 && run.containers.every((c) => c.state === 'terminated');
    const order = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
    const conditions = [...run.conditions].sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
    cluster.mutate(
      pods,
      run.namespace,
      run.name,
      (draft) => {
        draft.status = {
          phase: failed ? 'Failed' : started ? 'Running' : 'Pending',
          conditions,
          hostIP: run.hostIP,
          hostIPs: [{ ip: run.hostIP }],
          ...(run.started ? { podIP: run.podIP, podIPs: [{ ip: run.podIP }] } : {}),
          startTime: run.startTime,
          containerStatuses: run.containers.map((c) => containerStatus(run, c)),
          qosClass: qosClass(draft.spec ?? {}),
        };
      },
      { status: true },
    );
  }

  return {
    stop: () => {
      unsubscribe();
      stopTicker();
    },
  };
}
