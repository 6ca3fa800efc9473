/**
 * `npm run kube-sim`: kube-sim on its own, for kubectl and for a platform started elsewhere.
 *
 *   KUBE_SIM_PORT                    port (default 8001; 0 picks a free one)
 *   KUBE_SIM_HOST                    address (default 127.0.0.1)
 *   KUBE_SIM_TOKEN                   bearer token the host cluster requires (default: none, open)
 *   KUBE_SIM_KUBECONFIG              where to write the kubeconfig (default ./.data/kube-sim.kubeconfig)
 *   KUBE_SIM_POD_READY_DELAY_MS      default 500
 *   KUBE_SIM_CLUSTER_PHASE_DELAY_MS  default 1000
 *   KUBE_SIM_NODES                   default 3
 *   KUBE_SIM_LOG_INTERVAL_MS         default 2000
 *   LOG_LEVEL                        default info (debug logs every request)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createLogger } from '../kernel/logger.js';
import { projectRoot } from '../kernel/paths.js';
import { KubeSimOptionError, startKubeSim, type KubeSimOptions } from './index.js';

function fail(message: string): never {
  process.stderr.write(`kube-sim: ${message}\n`);
  process.exit(1);
}

function integerVariable(name: string, fallback: number | undefined): number | undefined {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) fail(`${name} must be a non-negative integer, got "${raw}"`);
  return Number(raw);
}

async function main(): Promise<void> {
  const level = process.env.LOG_LEVEL?.trim() || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(level)) fail(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent; got "${level}"`);
  const logger = createLogger({ service: 'kube-sim', level });
  const kubeconfigPath = resolve(projectRoot(), process.env.KUBE_SIM_KUBECONFIG?.trim() || '.data/kube-sim.kubeconfig');
  const options: KubeSimOptions = {
    port: integerVariable('KUBE_SIM_PORT', 8001),
    host: process.env.KUBE_SIM_HOST?.trim() || '127.0.0.1',
    token: process.env.KUBE_SIM_TOKEN?.trim() || undefined,
    podReadyDelayMs: integerVariable('KUBE_SIM_POD_READY_DELAY_MS', undefined),
    clusterPhaseDelayMs: integerVariable('KUBE_SIM_CLUSTER_PHASE_DELAY_MS', undefined),
    nodes: integerVariable('KUBE_SIM_NODES', undefined),
    logIntervalMs: integerVariable('KUBE_SIM_LOG_INTERVAL_MS', undefined),
    logger,
  };

  let sim;
  try {
    sim = await startKubeSim(options);
  } catch (error) {
    if (error instanceof KubeSimOptionError) fail(error.message);
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') fail(`port ${options.port} is in use: set KUBE_SIM_PORT to another port (0 picks a free one)`);
    throw error;
  }
  mkdirSync(dirname(kubeconfigPath), { recursive: true });
  writeFileSync(kubeconfigPath, sim.kubeconfig, { mode: 0o600 });

  process.stdout.write(
    [
      '',
      'kube-sim: a local Kubernetes API server double for development and tests (not a cluster)',
      `  listening on   ${sim.url}`,
      `  kubeconfig     ${kubeconfigPath}`,
      `  auth           ${sim.token ? 'bearer token required (KUBE_SIM_TOKEN, written into the kubeconfig)' : 'open (no token required)'}`,
      `  try            kubectl --kubeconfig ${kubeconfigPath} get nodes`,
      `  virtual clusters of Cluster API Clusters appear under ${sim.url}/vclusters/<namespace>/<name>`,
      '  Ctrl-C stops it; objects live in memory only.',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'kube-sim: stopping');
    sim.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'kube-sim: error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`kube-sim: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
