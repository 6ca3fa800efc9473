/**
 * kube-sim against real peers: kubectl (when on PATH) and HTTPS with a certificate made by
 * openssl (when on PATH). Each part says when it is skipped.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startKubeSim, type KubeSim } from '../../kube-sim/index.js';
import { clients, eventually } from './support.js';

const run = promisify(execFile);

function available(binary: string, args: string[]): boolean {
  try {
    execFileSync(binary, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const hasKubectl = available('kubectl', ['version', '--client']);
const hasOpenssl = available('openssl', ['version']);
if (!hasKubectl) process.stdout.write('kube-sim peers: kubectl is not on PATH, its tests are skipped\n');
if (!hasOpenssl) process.stdout.write('kube-sim peers: openssl is not on PATH, the HTTPS test is skipped\n');

const dir = mkdtempSync(join(tmpdir(), 'kube-sim-peers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

(hasKubectl ? describe : describe.skip)('kubectl', () => {
  let sim: KubeSim;
  let kubeconfig: string;
  const kubectl = async (...args: string[]) => (await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], { timeout: 20_000 })).stdout;

  beforeAll(async () => {
    // No token: kubectl does not send bearer tokens over plain HTTP (the HTTPS test below does).
    sim = await startKubeSim({ podReadyDelayMs: 10, nodes: 2, logIntervalMs: 0 });
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, sim.kubeconfig);
  });
  afterAll(async () => {
    await sim.stop();
  });

  it('gets nodes, applies a manifest, waits for the rollout and reads logs', async () => {
    const nodes = JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as { items: { metadata: { name: string } }[] };
    expect(nodes.items.map((n) => n.metadata.name)).toEqual(['kube-sim-node-1', 'kube-sim-node-2']);
    const manifest = join(dir, 'app.yaml');
    writeFileSync(
      manifest,
      [
        'apiVersion: apps/v1',
        'kind: Deployment',
        'metadata: {name: hello, namespace: default}',
        'spec:',
        '  replicas: 2',
        '  selector: {matchLabels: {app: hello}}',
        '  template:',
        '    metadata: {labels: {app: hello}}',
        '    spec: {containers: [{name: hello, image: "nginx:1.25"}]}',
        '',
      ].join('\n'),
    );
    expect(await kubectl('apply', '-f', manifest)).toContain('deployment.apps/hello created');
    expect(await kubectl('rollout', 'status', 'deployment/hello', '--timeout=10s')).toContain('successfully rolled out');
    expect(await kubectl('apply', '--server-side', '-f', manifest)).toContain('serverside-applied');
    await kubectl('set', 'image', 'deployment/hello', 'hello=nginx:1.26');
    await kubectl('rollout', 'status', 'deployment/hello', '--timeout=10s');
    await kubectl('rollout', 'undo', 'deployment/hello');
    await kubectl('rollout', 'status', 'deployment/hello', '--timeout=10s');
    expect(await kubectl('rollout', 'history', 'deployment/hello')).toMatch(/2\s+<none>\s+3\s+<none>/);
    const logs = await kubectl('logs', 'deployment/hello', '--tail=20');
    expect(logs).toContain('starting hello');
    const pods = await kubectl('get', 'pods', '-l', 'app=hello');
    expect(pods).toMatch(/hello-\w+-\w+\s+1\/1\s+Running\s+0/);
  });
});

(hasOpenssl ? describe : describe.skip)('HTTPS', () => {
  it('serves HTTPS with the given certificate, and client-node verifies it from the kubeconfig', async () => {
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=kube-sim', '-addext', 'subjectAltName=IP:127.0.0.1'], {
      stdio: 'ignore',
    });
    const sim = await startKubeSim({ podReadyDelayMs: 0, nodes: 1, token: 'tls-token', tls: { key: readFileSync(key), cert: readFileSync(cert, 'utf8') } });
    try {
      expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(sim.kubeconfig).toContain('certificate-authority-data');
      expect(sim.kubeconfig).not.toContain('insecure-skip-tls-verify');
      const api = clients(sim.kubeConfig());
      await api.core.createNamespace({ body: { metadata: { name: 'secure' } } });
      const pod = await api.core.createNamespacedPod({ namespace: 'secure', body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } } });
      expect(pod.metadata?.uid).toBeDefined();
      await eventually(async () => (await api.core.readNamespacedPod({ name: 'p', namespace: 'secure' })).status?.phase === 'Running', 'the pod running over HTTPS');
      if (hasKubectl) {
        const kubeconfig = join(dir, 'tls-kubeconfig');
        writeFileSync(kubeconfig, sim.kubeconfig);
        const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'tls-cache'), 'get', 'pods', '-n', 'secure', '-o', 'name'], { timeout: 20_000 });
        expect(stdout.trim()).toBe('pod/p');
      }
    } finally {
      await sim.stop();
    }
  });
});
