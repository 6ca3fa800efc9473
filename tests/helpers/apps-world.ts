import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKubeSim, type KubeSim, type KubeSimOptions } from '../../kube-sim/index.js';
import { createLogger } from '../../kernel/logger.js';
import { createLocalBareRepo } from '../../subgraphs/platform/gitops/fleet-repo.js';
import { startLocalApplier, type LocalApplier } from '../../subgraphs/platform/gitops/local-applier.js';
import { startLocalIngress, type LocalIngress } from '../../subgraphs/platform/gitops/local-ingress.js';
import { virtualClustersFromHost } from '../../subgraphs/platform/gitops/virtual-clusters.js';
import { httpClient } from './http.js';
import { startStack, type Stack } from './stack.js';
import { eventually } from './wait.js';

export interface AppsWorld {
  stack: Stack;
  sim: KubeSim;
  /** A temporary folder of the world's own (kubeconfig, fleet repository, working copies). */
  dir: string;
  /** `file://` URL of the bare fleet repository. */
  repoUrl: string;
  applier: LocalApplier;
  ingress: LocalIngress;
  /** Tokens of two tenants' users, scopes `read deploy`. */
  alice: string;
  bob: string;
  /** alice's CloudSpace `prod`, Ready. */
  space: { id: string; name: string; namespace: string };
  stop(): Promise<void>;
}

/**
 * What the app e2e tests run against, as the local profile runs it: kube-sim, a temporary bare
 * fleet repository, the local applier (the Flux stand-in) and the local HTTPS ingress, and the
 * test stack pointed at them, with one Ready CloudSpace for tenant A.
 */
export async function startAppsWorld(label: string, tenants: { a: string; b: string }, simOptions: KubeSimOptions = {}): Promise<AppsWorld> {
  const logger = createLogger({ service: 'test', level: 'silent' });
  const sim = await startKubeSim({ podReadyDelayMs: 50, clusterPhaseDelayMs: 50, progressDeadlineFactor: 0.002, ...simOptions });
  const dir = mkdtempSync(join(tmpdir(), `${label}-`));
  writeFileSync(join(dir, 'kubeconfig'), sim.kubeconfig);
  const repoUrl = await createLocalBareRepo(join(dir, 'fleet.git'), 'main');
  const applier = await startLocalApplier({ repoUrl, branch: 'main', workdir: join(dir, 'applier'), hostKubeConfig: sim.kubeConfig(), intervalMs: 150, logger });
  const ingress = await startLocalIngress({ virtualClusters: virtualClustersFromHost(sim.kubeConfig()), logger, cacheMs: 100 });
  writeFileSync(join(dir, 'ingress-ca.pem'), ingress.caPem);
  const stack = await startStack(label.replace(/-/g, '_'), {}, {
    KUBECONFIG: join(dir, 'kubeconfig'),
    FLUX_GIT_URL: repoUrl,
    FLUX_GIT_WORKDIR: join(dir, 'platform-fleet'),
    APPS_BASE_DOMAIN: 'apps.example.test',
    APPS_INGRESS_ADDRESS: `127.0.0.1:${ingress.port}`,
    APPS_INGRESS_CA_FILE: join(dir, 'ingress-ca.pem'),
    REGISTER_MANAGEMENT_CLUSTER: 'true',
  });
  const call = httpClient(() => stack.base);
  const alice = await stack.token({ subject: 'alice', tenantId: tenants.a, scopes: ['read', 'deploy'] });
  const bob = await stack.token({ subject: 'bob', tenantId: tenants.b, scopes: ['read', 'deploy'] });
  const created = await call('POST', '/platform/api/v1/cloudspaces', { token: alice, body: { name: 'prod' } });
  const space = await eventually(async () => {
    const s = await call('GET', `/platform/api/v1/cloudspaces/${created.json.id}`, { token: alice });
    return s.json.status === 'Ready' && s.json;
  }, 'CloudSpace Ready');
  return {
    stack,
    sim,
    dir,
    repoUrl,
    applier,
    ingress,
    alice,
    bob,
    space,
    async stop() {
      await stack.stop();
      await applier.stop();
      await ingress.stop();
      await sim.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
