/**
 * The simulated controllers through client-node: Deployments → ReplicaSets (revisions, rollback
 * to an earlier template, restart) → Pods becoming Ready, failing images, progress deadlines,
 * events, logs, metrics and ResourceQuota admission.
 */
import { Log, Metrics, PatchStrategy, setHeaderOptions, topPods, type CoreV1Event, type V1Deployment, type V1Pod, type V1ReplicaSet } from '@kubernetes/client-node';
import { PassThrough } from 'node:stream';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { clients, deploymentManifest, eventually, sleep, statusOf, type Clients } from './support.js';

let sim: KubeSim;
let api: Clients;
const NS = 'apps';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

beforeAll(async () => {
  sim = await startKubeSim({ podReadyDelayMs: 20, nodes: 2, logIntervalMs: 40, crashLoopIntervalMs: 60, progressDeadlineFactor: 0.001 });
  api = clients(sim.kubeConfig());
  await api.core.createNamespace({ body: { metadata: { name: NS } } });
});

afterAll(async () => {
  await sim.stop();
});

const revision = (o: { metadata?: { annotations?: Record<string, string> } }) => o.metadata?.annotations?.['deployment.kubernetes.io/revision'];

async function replicaSets(app: string): Promise<V1ReplicaSet[]> {
  return (await api.apps.listNamespacedReplicaSet({ namespace: NS, labelSelector: `app=${app}` })).items;
}

async function pods(app: string): Promise<V1Pod[]> {
  return (await api.core.listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` })).items;
}

async function rolledOut(name: string, replicas: number): Promise<V1Deployment> {
  return eventually(async () => {
    const d = await api.apps.readNamespacedDeployment({ name, namespace: NS });
    const s = d.status;
    const done = s?.observedGeneration === d.metadata?.generation && s?.updatedReplicas === replicas && s?.readyReplicas === replicas && s?.availableReplicas === replicas && s?.replicas === replicas;
    return done ? d : undefined;
  }, `deployment ${name} rolled out with ${replicas} replicas`);
}

async function events(name: string): Promise<CoreV1Event[]> {
  return (await api.core.listNamespacedEvent({ namespace: NS, fieldSelector: `involvedObject.name=${name}` })).items;
}

describe('deployments', () => {
  it('creates an owned ReplicaSet whose pods become Ready, and keeps the status current', async () => {
    await api.apps.createNamespacedDeployment({ namespace: NS, body: deploymentManifest('web', NS, { replicas: 3 }) });
    const d = await rolledOut('web', 3);
    expect(revision(d)).toBe('1');
    const conditions = Object.fromEntries((d.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(conditions.Available).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(conditions.Progressing).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });

    const [rs] = await replicaSets('web');
    expect(rs?.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Deployment', name: 'web', uid: d.metadata?.uid, controller: true })]);
    const hash = rs?.metadata?.labels?.['pod-template-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs?.metadata?.name).toBe(`web-${hash}`);
    expect(revision(rs!)).toBe('1');
    expect(rs?.status).toMatchObject({ replicas: 3, readyReplicas: 3, availableReplicas: 3 });

    const running = await pods('web');
    expect(running).toHaveLength(3);
    for (const pod of running) {
      expect(pod.metadata?.name).toMatch(new RegExp(`^web-${hash}-[a-z0-9]{5}$`));
      expect(pod.metadata?.labels?.['pod-template-hash']).toBe(hash);
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: rs?.metadata?.name });
      expect(pod.spec?.nodeName).toMatch(/^kube-sim-node-\d$/);
      expect(pod.status?.phase).toBe('Running');
      expect(pod.status?.podIP).toMatch(/^10\.244\./);
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(pod.status?.containerStatuses?.[0]).toMatchObject({ name: 'app', ready: true, restartCount: 0, state: { running: expect.anything() } });
    }
  });

  it('scales up and down', async () => {
    await api.apps.patchNamespacedDeployment({ name: 'web', namespace: NS, body: { spec: { replicas: 1 } } }, merge);
    await rolledOut('web', 1);
    await eventually(async () => (await pods('web')).length === 1, 'one pod left');
    await api.apps.patchNamespacedDeploymentScale({ name: 'web', namespace: NS, body: { spec: { replicas: 2 } } }, merge);
    await rolledOut('web', 2);
  });

  it('raises the revision on each template change, reuses the ReplicaSet of an earlier template, and scales old ones to 0', async () => {
    const image = (tag: string) => ({ spec: { template: { spec: { containers: [{ name: 'app', image: `nginx:${tag}` }] } } } });
    await api.apps.patchNamespacedDeployment({ name: 'web', namespace: NS, body: image('1.26') }, strategic);
    let d = await rolledOut('web', 2);
    expect(revision(d)).toBe('2');
    await api.apps.patchNamespacedDeployment({ name: 'web', namespace: NS, body: image('1.27') }, strategic);
    d = await rolledOut('web', 2);
    expect(revision(d)).toBe('3');
    let sets = await replicaSets('web');
    expect(sets).toHaveLength(3);

    // Back to the first template: its ReplicaSet comes back as revision 4.
    await api.apps.patchNamespacedDeployment({ name: 'web', namespace: NS, body: image('1.25') }, strategic);
    d = await rolledOut('web', 2);
    expect(revision(d)).toBe('4');
    sets = await replicaSets('web');
    expect(sets).toHaveLength(3);
    const byImage = Object.fromEntries(sets.map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs]));
    expect(revision(byImage['nginx:1.25']!)).toBe('4');
    expect(byImage['nginx:1.25']!.metadata?.annotations?.['deployment.kubernetes.io/revision-history']).toBe('1');
    expect(byImage['nginx:1.25']!.spec?.replicas).toBe(2);
    expect(byImage['nginx:1.26']!.spec?.replicas).toBe(0);
    expect(byImage['nginx:1.27']!.spec?.replicas).toBe(0);
    const images = (await pods('web')).map((p) => p.spec?.containers[0]?.image);
    await eventually(async () => (await pods('web')).every((p) => p.spec?.containers[0]?.image === 'nginx:1.25') && (await pods('web')).length === 2, `only nginx:1.25 pods (had ${images.join(', ')})`);

    const scaling = (await events('web')).filter((e) => e.reason === 'ScalingReplicaSet').map((e) => e.message);
    expect(scaling).toEqual(expect.arrayContaining([expect.stringMatching(/^Scaled up replica set web-\w+ from 0 to 3$/), expect.stringMatching(/^Scaled down replica set web-\w+ from 2 to 0$/)]));
  });

  it('restarts through the kubectl.kubernetes.io/restartedAt template annotation: new ReplicaSet, new pods', async () => {
    const before = new Set((await pods('web')).map((p) => p.metadata?.name));
    await api.apps.patchNamespacedDeployment(
      { name: 'web', namespace: NS, body: { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } } },
      strategic,
    );
    const d = await rolledOut('web', 2);
    expect(revision(d)).toBe('5');
    await eventually(async () => {
      const now = await pods('web');
      return now.length === 2 && now.every((p) => !before.has(p.metadata?.name) && p.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']);
    }, 'pods replaced');
  });

  it('deletes the ReplicaSets and pods of a deleted Deployment', async () => {
    await api.apps.createNamespacedDeployment({ namespace: NS, body: deploymentManifest('gone', NS, { replicas: 1 }) });
    await rolledOut('gone', 1);
    await api.apps.deleteNamespacedDeployment({ name: 'gone', namespace: NS });
    expect(await replicaSets('gone')).toHaveLength(0);
    expect(await pods('gone')).toHaveLength(0);
  });

  it('records Scheduled, Pulling, Pulled, Created and Started events for a pod', async () => {
    const [pod] = await pods('web');
    const reasons = (await events(pod!.metadata!.name!)).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Scheduled', 'Pulling', 'Pulled', 'Created', 'Started']));
    const scheduled = (await events(pod!.metadata!.name!)).find((e) => e.reason === 'Scheduled');
    expect(scheduled).toMatchObject({ type: 'Normal', involvedObject: { kind: 'Pod', name: pod!.metadata!.name, uid: pod!.metadata!.uid }, source: { component: 'default-scheduler' } });
    expect(scheduled?.message).toBe(`Successfully assigned ${NS}/${pod!.metadata!.name} to ${pod!.spec!.nodeName}`);
  });
});

describe('failing pods', () => {
  it('shows ImagePullBackOff for an image tagged fail, keeps the old pods, and exceeds the progress deadline', async () => {
    await api.apps.createNamespacedDeployment({ namespace: NS, body: { ...deploymentManifest('broken', NS, { replicas: 1 }), spec: { ...deploymentManifest('broken', NS, { replicas: 1 }).spec, progressDeadlineSeconds: 200 } } });
    await rolledOut('broken', 1);
    const good = (await pods('broken'))[0]!.metadata!.name;
    await api.apps.patchNamespacedDeployment({ name: 'broken', namespace: NS, body: { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:fail' }] } } } } }, strategic);

    const failing = await eventually(async () => {
      const list = await pods('broken');
      return list.find((p) => p.spec?.containers[0]?.image === 'nginx:fail' && p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff');
    }, 'a pod in ImagePullBackOff');
    expect(failing.status?.phase).toBe('Pending');
    expect(failing.status?.containerStatuses?.[0]?.ready).toBe(false);
    const podEvents = await eventually(async () => {
      const list = await events(failing.metadata!.name!);
      return list.some((e) => e.reason === 'BackOff') ? list : undefined;
    }, 'BackOff event');
    expect(podEvents).toEqual(expect.arrayContaining([expect.objectContaining({ reason: 'Failed', type: 'Warning', message: expect.stringContaining('Failed to pull image "nginx:fail"') })]));
    // The old pod keeps serving while the new one fails.
    expect((await pods('broken')).map((p) => p.metadata?.name)).toContain(good);

    const d = await eventually(async () => {
      const dep = await api.apps.readNamespacedDeployment({ name: 'broken', namespace: NS });
      return dep.status?.conditions?.find((c) => c.type === 'Progressing' && c.status === 'False') ? dep : undefined;
    }, 'ProgressDeadlineExceeded', 3000);
    expect(d.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(d.status?.unavailableReplicas).toBe(1);

    const logs = await statusOf(api.core.readNamespacedPodLog({ name: failing.metadata!.name!, namespace: NS }));
    expect(logs.code).toBe(400);
  });

  it('shows CrashLoopBackOff with a rising restartCount for an image tagged crash', async () => {
    await api.core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'crasher', labels: { app: 'crasher' } }, spec: { containers: [{ name: 'main', image: 'registry.example.com/team/job:crash-1' }] } } });
    const pod = await eventually(async () => {
      const p = await api.core.readNamespacedPod({ name: 'crasher', namespace: NS });
      return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2 ? p : undefined;
    }, 'two restarts');
    const status = pod.status!.containerStatuses![0]!;
    expect(status.state?.waiting?.reason).toBe('CrashLoopBackOff');
    expect(status.lastState?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(status.ready).toBe(false);
    expect(pod.status?.phase).toBe('Running');
    const backOff = (await events('crasher')).find((e) => e.reason === 'BackOff');
    expect(backOff).toMatchObject({ type: 'Warning', message: expect.stringContaining('Back-off restarting failed container main') });
    await eventually(async () => ((await events('crasher')).find((e) => e.reason === 'BackOff')?.count ?? 0) >= 2, 'a repeated BackOff event counted');
    const logs = await api.core.readNamespacedPodLog({ name: 'crasher', namespace: NS });
    expect(logs).toContain('simulated crash');
  });
});

describe('logs', () => {
  it('reads the log with tailLines, timestamps and sinceSeconds, and refuses an unknown container', async () => {
    await api.core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'talker' }, spec: { containers: [{ name: 'app', image: 'nginx:1.25', ports: [{ containerPort: 3000 }] }] } } });
    await eventually(async () => (await api.core.readNamespacedPodLog({ name: 'talker', namespace: NS })).split('\n').length > 6, 'a few log lines');
    const all = await api.core.readNamespacedPodLog({ name: 'talker', namespace: NS });
    expect(all).toContain('listening on 0.0.0.0:3000');
    const tail = await api.core.readNamespacedPodLog({ name: 'talker', namespace: NS, container: 'app', tailLines: 2 });
    expect(tail.trimEnd().split('\n')).toHaveLength(2);
    expect(all.trimEnd().endsWith(tail.trimEnd().split('\n')[1]!)).toBe(true);
    const stamped = await api.core.readNamespacedPodLog({ name: 'talker', namespace: NS, tailLines: 1, timestamps: true });
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z /);
    expect(await api.core.readNamespacedPodLog({ name: 'talker', namespace: NS, sinceSeconds: 60 })).toContain('listening on');
    const mark = new Date().toISOString();
    await sleep(100);
    const recent = await (await fetch(`${sim.url}/api/v1/namespaces/${NS}/pods/talker/log?sinceTime=${mark}`)).text();
    expect(recent).toContain('INFO');
    expect(recent).not.toContain('listening on');
    const wrong = await statusOf(api.core.readNamespacedPodLog({ name: 'talker', namespace: NS, container: 'nope' }));
    expect(wrong).toMatchObject({ code: 400, reason: 'BadRequest', message: 'container nope is not valid for pod talker' });
  });

  it('follows a log as lines are written, until the pod is deleted', async () => {
    const stream = new PassThrough();
    let received = '';
    let ended = false;
    stream.on('data', (chunk: Buffer) => (received += chunk.toString()));
    stream.on('end', () => (ended = true));
    await new Log(sim.kubeConfig()).log(NS, 'talker', 'app', stream, { follow: true, tailLines: 1 });
    await eventually(() => received.trimEnd().split('\n').length >= 3, 'new lines while following');
    expect(ended).toBe(false);
    await api.core.deleteNamespacedPod({ name: 'talker', namespace: NS });
    await eventually(() => ended, 'the followed stream to end with the pod');
  });

  it('stops following when the client disconnects', async () => {
    await api.core.createNamespacedPod({ namespace: NS, body: { metadata: { name: 'quiet' }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } } });
    await eventually(async () => (await api.core.readNamespacedPod({ name: 'quiet', namespace: NS })).status?.phase === 'Running', 'running');
    const stream = new PassThrough();
    stream.resume();
    const controller = await new Log(sim.kubeConfig()).log(NS, 'quiet', 'app', stream, { follow: true });
    await sleep(50);
    expect(sim.host.streams.size).toBe(1);
    controller.abort();
    await eventually(() => sim.host.streams.size === 0, 'the server to drop the follower');
  });
});

describe('metrics', () => {
  it('serves PodMetrics and NodeMetrics with plausible usage', async () => {
    const metrics = new Metrics(sim.kubeConfig());
    const podMetrics = await metrics.getPodMetrics(NS);
    const web = podMetrics.items.filter((m) => m.metadata.name.startsWith('web-'));
    expect(web).toHaveLength(2);
    const usage = web[0]!.containers[0]!.usage;
    expect(web[0]!.containers[0]!.name).toBe('app');
    expect(usage.cpu).toMatch(/^\d+n$/);
    expect(usage.memory).toMatch(/^\d+Ki$/);
    const nodes = await metrics.getNodeMetrics();
    expect(nodes.items.map((n) => n.metadata.name)).toEqual(['kube-sim-node-1', 'kube-sim-node-2']);
    const top = (await topPods(api.core, metrics, NS)).find((p) => p.Pod.metadata?.name === web[0]!.metadata.name);
    expect(Number(top?.CPU.CurrentUsage)).toBeGreaterThan(0);
    expect(Number(top?.Memory.CurrentUsage)).toBeGreaterThan(1024 * 1024);
    const single = await fetch(`${sim.url}/apis/metrics.k8s.io/v1beta1/namespaces/${NS}/pods/${web[0]!.metadata.name}`);
    expect(await single.json()).toMatchObject({ kind: 'PodMetrics', metadata: { name: web[0]!.metadata.name } });
  });
});

describe('resource quota', () => {
  it('refuses pods beyond the quota with 403 Forbidden and keeps status.used current', async () => {
    await api.core.createNamespace({ body: { metadata: { name: 'quota' } } });
    await api.core.createNamespacedResourceQuota({ namespace: 'quota', body: { metadata: { name: 'compute' }, spec: { hard: { pods: '2', 'requests.cpu': '1', 'requests.memory': '1Gi' } } } });
    const pod = (name: string, cpu: string, memory = '128Mi') => ({ metadata: { name }, spec: { containers: [{ name: 'app', image: 'nginx:1.25', resources: { requests: { cpu, memory } } }] } });
    await api.core.createNamespacedPod({ namespace: 'quota', body: pod('a', '500m') });
    const tooMuchCpu = await statusOf(api.core.createNamespacedPod({ namespace: 'quota', body: pod('b', '600m') }));
    expect(tooMuchCpu).toMatchObject({ code: 403, reason: 'Forbidden', details: { name: 'b', kind: 'pods' } });
    expect(tooMuchCpu.message).toBe('pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=500m, limited: requests.cpu=1');
    await api.core.createNamespacedPod({ namespace: 'quota', body: pod('b', '250m', '0.5Gi') });
    const tooMany = await statusOf(api.core.createNamespacedPod({ namespace: 'quota', body: pod('c', '100m') }));
    expect(tooMany.message).toBe('pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2');
    const undeclared = await statusOf(api.core.createNamespacedPod({ namespace: 'quota', body: { metadata: { name: 'd' }, spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] } } }));
    expect(undeclared).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(undeclared.message).toContain('failed quota: compute: must specify requests.cpu,requests.memory');

    const quota = await eventually(async () => {
      const q = await api.core.readNamespacedResourceQuota({ name: 'compute', namespace: 'quota' });
      return q.status?.used?.pods === '2' ? q : undefined;
    }, 'quota status');
    expect(quota.status).toEqual({ hard: { pods: '2', 'requests.cpu': '1', 'requests.memory': '1Gi' }, used: { pods: '2', 'requests.cpu': '750m', 'requests.memory': '640Mi' } });
    await api.core.deleteNamespacedPod({ name: 'a', namespace: 'quota' });
    await eventually(async () => (await api.core.readNamespacedResourceQuota({ name: 'compute', namespace: 'quota' })).status?.used?.pods === '1', 'used pods back to 1');
  });

  it('gives a FailedCreate event to a ReplicaSet whose pods the quota refuses', async () => {
    await api.apps.createNamespacedDeployment({ namespace: 'quota', body: deploymentManifest('big', 'quota', { replicas: 3, cpu: '200m' }) });
    const rs = await eventually(async () => (await api.apps.listNamespacedReplicaSet({ namespace: 'quota' })).items[0], 'a ReplicaSet');
    const failed = await eventually(async () => {
      const list = (await api.core.listNamespacedEvent({ namespace: 'quota', fieldSelector: `involvedObject.name=${rs.metadata!.name},reason=FailedCreate` })).items;
      return list[0];
    }, 'FailedCreate');
    expect(failed.type).toBe('Warning');
    expect(failed.message).toMatch(/^Error creating: pods "big-\w+-\w+" is forbidden: exceeded quota: compute/);
    const current = await api.apps.readNamespacedReplicaSet({ name: rs.metadata!.name!, namespace: 'quota' });
    expect(current.status?.conditions?.find((c) => c.type === 'ReplicaFailure')).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    expect((await api.core.listNamespacedPod({ namespace: 'quota', labelSelector: 'app=big' })).items).toHaveLength(1);
  });
});
