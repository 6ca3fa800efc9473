import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadEdgeConfig, loadLauncherConfig, loadSubgraphConfig, type ServiceName } from './kernel/config.js';
import { relayBusBetween } from './kernel/bus.js';
import { ensureDatabase } from './kernel/db.js';
import type { EmbeddedDatabase } from './kernel/embedded-postgres.js';
import { createLogger, type Logger } from './kernel/logger.js';

type SubgraphName = Exclude<ServiceName, 'edge'>;
const SUBGRAPHS: SubgraphName[] = ['auth', 'cicd', 'platform'];

const USAGE = `usage: npm start [-- <service>]

  (no service)   the whole platform on this machine, local profile: embedded PostgreSQL in
                 ./.data (or DATABASE_URL), the three subgraphs and the edge
  edge           the edge alone (GraphQL gateway, REST facade, docs)
  auth | cicd | platform
                 one subgraph alone

Single services default to APP_PROFILE=production and need their configuration (see README).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

async function loadSubgraph(name: SubgraphName) {
  switch (name) {
    case 'auth':
      return (await import('./subgraphs/auth/index.js')).authSubgraph;
    case 'cicd':
      return (await import('./subgraphs/cicd/index.js')).cicdSubgraph;
    case 'platform':
      return (await import('./subgraphs/platform/index.js')).platformSubgraph;
  }
}

/**
 * Stops `stop` on SIGINT/SIGTERM, once, then exits. A child of the local launcher leaves SIGINT to
 * the launcher: Ctrl-C reaches the whole process group, and the launcher stops its children in
 * order (SIGTERM) instead of seeing them vanish under it.
 */
function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    // An orchestrator sends SIGKILL after its grace period anyway; say why before that.
    setTimeout(() => {
      logger.error('did not stop within 25 s; exiting');
      process.exit(1);
    }, 25_000).unref();
    stop()
      .then(() => process.exit(0))
      .catch((error) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => (process.env.LAUNCHER_BUS === 'ipc' ? undefined : handler('SIGINT')));
  process.on('SIGTERM', () => handler('SIGTERM'));
}

/** Runs one service in this process (production entry point, and the local launcher's children). */
async function runService(service: ServiceName): Promise<void> {
  if (service === 'edge') {
    const config = loadEdgeConfig();
    const logger = createLogger({ service, level: config.logLevel });
    const { createEdge } = await import('./rest-facade/createEdge.js');
    const edge = await createEdge(config, logger);
    logger.info({ address: edge.address, basePath: config.basePath, profile: config.profile }, 'edge listening');
    onShutdown(logger, () => edge.stop());
    process.send?.({ type: 'ready', address: edge.address });
    return;
  }
  const config = loadSubgraphConfig(service);
  const logger = createLogger({ service, level: config.logLevel });
  const { startSubgraph } = await import('./kernel/graphql/startSubgraph.js');
  const running = await startSubgraph(await loadSubgraph(service), config, logger);
  logger.info({ url: running.url, profile: config.profile }, `${service} subgraph listening`);
  onShutdown(logger, () => running.stop());
  process.send?.({ type: 'ready', url: running.url });
  // The launcher going away (even by SIGKILL) must not leave this child behind.
  process.on('disconnect', () => {
    void running.stop().finally(() => process.exit(0));
  });
}

function freePort(preferred: number): Promise<number> {
  const tryPort = (port: number) =>
    new Promise<number>((resolvePort, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolvePort(typeof address === 'object' && address ? address.port : port));
      });
    });
  return tryPort(preferred).catch(() => tryPort(0));
}

/**
 * Development secrets of the local profile: generated once, kept in the data directory so that
 * tokens survive restarts. Never used outside the local profile.
 */
interface LocalSecrets {
  jwtAccessSecret: string;
  jwtRefreshSecret: string;
  internalJwtSecret: string;
  secretEncryptionKey: string;
  superAdmin: { email: string; username: string; password: string };
}

function localSecrets(dataDir: string): { secrets: LocalSecrets; created: boolean } {
  const file = join(dataDir, 'dev-secrets.json');
  const existing = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalSecrets>) : {};
  const random = () => randomBytes(32).toString('base64url');
  const secrets: LocalSecrets = {
    jwtAccessSecret: existing.jwtAccessSecret ?? random(),
    jwtRefreshSecret: existing.jwtRefreshSecret ?? random(),
    internalJwtSecret: existing.internalJwtSecret ?? random(),
    secretEncryptionKey: existing.secretEncryptionKey ?? randomBytes(32).toString('hex'),
    superAdmin: existing.superAdmin ?? { email: 'admin@localhost.localdomain', username: 'superadmin', password: randomBytes(18).toString('base64url') },
  };
  const created = !existing.superAdmin;
  if (JSON.stringify(existing) !== JSON.stringify(secrets)) writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return { secrets, created };
}

/** The local profile's stand-ins for a Git server, Flux and an ingress controller (platform/gitops). */
async function startLocalGitOps(dataDir: string, kubeconfigPath: string, ingressPort: number, logger: Logger) {
  const [{ KubeConfig }, fleet, applierModule, ingressModule, clusters] = await Promise.all([
    import('@kubernetes/client-node'),
    import('./subgraphs/platform/gitops/fleet-repo.js'),
    import('./subgraphs/platform/gitops/local-applier.js'),
    import('./subgraphs/platform/gitops/local-ingress.js'),
    import('./subgraphs/platform/gitops/virtual-clusters.js'),
  ]);
  const host = new KubeConfig();
  host.loadFromFile(kubeconfigPath);
  const repoUrl = await fleet.createLocalBareRepo(join(dataDir, 'fleet.git'), 'main');
  const applier = await applierModule.startLocalApplier({ repoUrl, branch: 'main', workdir: join(dataDir, 'flux-local'), hostKubeConfig: host, intervalMs: 1000, logger });
  // The CA is kept, so browsers and curl can trust it once.
  const caFile = join(dataDir, 'ingress-ca.pem');
  const caKeyFile = join(dataDir, 'ingress-ca.key');
  const ca = existsSync(caKeyFile) ? { cert: readFileSync(caFile, 'utf8'), key: readFileSync(caKeyFile, 'utf8') } : await ingressModule.createIngressCa();
  writeFileSync(caFile, ca.cert);
  writeFileSync(caKeyFile, ca.key, { mode: 0o600 });
  const ingress = await ingressModule.startLocalIngress({ port: await freePort(ingressPort), virtualClusters: clusters.virtualClustersFromHost(host), logger, ca });
  return {
    repoUrl,
    caFile,
    ingressUrl: ingress.url,
    ingressAddress: `127.0.0.1:${ingress.port}`,
    async stop() {
      await applier.stop();
      await ingress.stop();
    },
  };
}

/** The whole platform on one machine: the local profile that `npm start` runs. */
async function runLocalStack(): Promise<void> {
  const started = Date.now();
  const say = (message: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${message}\n`);
  const profile = process.env.APP_PROFILE ?? 'local';
  if (profile === 'production') fail('npm start without a service runs the local profile; start services one by one for production (npm start -- edge, ...)');
  say(`profile ${profile}: development defaults (generated secrets, embedded services, GraphQL introspection). Not for production.`);

  const launcher = loadLauncherConfig();
  const dataDir = resolve(launcher.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const { secrets, created: secretsCreated } = localSecrets(dataDir);
  const logger = createLogger({ service: 'launcher', level: process.env.LOG_LEVEL ?? 'warn' });

  let database: EmbeddedDatabase | undefined;
  let databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    say(`using PostgreSQL at ${new URL(databaseUrl).host} (DATABASE_URL)`);
  } else {
    const port = await freePort(launcher.embeddedPostgresPort);
    say(`starting embedded PostgreSQL in ${join(dataDir, 'postgres')} on 127.0.0.1:${port}`);
    // Loaded only here: the package installs exit hooks of its own that would cut short the
    // graceful shutdown of a single service.
    // The package installs exit hooks when loaded that would end the process (exit code 130) as
    // soon as PostgreSQL has stopped, cutting this launcher's orderly shutdown short; the
    // launcher stops PostgreSQL itself, so its signal hooks are taken off again.
    const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
    const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
    const { startEmbeddedPostgres } = await import('./kernel/embedded-postgres.js').catch(() =>
      fail('the embedded PostgreSQL needs the development dependencies (npm ci without --omit=dev), or set DATABASE_URL'),
    );
    database = await startEmbeddedPostgres({ dataDir, port, logger });
    for (const signal of signals) for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.off(signal, listener);
    databaseUrl = database.url.replace(/\/postgres$/, '/cloudops');
    await ensureDatabase(databaseUrl);
  }

  // Kubernetes: the user's cluster when KUBECONFIG is set, otherwise kube-sim in this process.
  let kubeSim: { stop(): Promise<void> } | undefined;
  let kubeconfig = process.env.KUBECONFIG;
  if (kubeconfig) {
    say(`using the Kubernetes cluster of ${kubeconfig} (KUBECONFIG)`);
  } else {
    const { keepSnapshotFile, readSnapshotFile, startKubeSim } = await import('./kube-sim/index.js');
    // kube-sim keeps objects in memory; its state file carries them across restarts, so that
    // what PostgreSQL remembers (CloudSpaces, virtual clusters, apps) still exists in it.
    const stateFile = join(dataDir, 'kube-sim-state.json');
    const state = readSnapshotFile(stateFile, (problem) => say(`kube-sim: ${problem}`));
    const sim = await startKubeSim({ port: await freePort(launcher.kubeSimPort), ...(state ? { state } : {}) });
    const keeper = keepSnapshotFile(sim, stateFile);
    kubeSim = {
      async stop() {
        keeper.stop();
        keeper.save();
        await sim.stop();
      },
    };
    kubeconfig = join(dataDir, 'kube-sim.kubeconfig');
    writeFileSync(kubeconfig, sim.kubeconfig, { mode: 0o600 });
    say(`started kube-sim (a local Kubernetes API double, not a cluster) at ${sim.url}${state ? `, objects restored from ${stateFile}` : ''}; kubeconfig in ${kubeconfig}`);
  }

  // GitOps: the user's fleet repository when FLUX_GIT_URL is set; otherwise a local bare
  // repository, an applier standing in for Flux, and an HTTPS ingress with its own CA.
  const gitops = process.env.FLUX_GIT_URL ? undefined : await startLocalGitOps(dataDir, kubeconfig, launcher.ingressPort, logger);
  if (gitops) {
    say(`fleet repository ${gitops.repoUrl}; local applier (a Flux stand-in) applies it to the virtual clusters`);
    say(`local ingress for app addresses at ${gitops.ingressUrl} (its CA: ${gitops.caFile})`);
  }

  const env = {
    ...process.env,
    APP_PROFILE: profile,
    KUBECONFIG: kubeconfig,
    ...(gitops ? { FLUX_GIT_URL: gitops.repoUrl, FLUX_GIT_WORKDIR: join(dataDir, 'fleet-platform'), APPS_INGRESS_ADDRESS: gitops.ingressAddress, APPS_INGRESS_CA_FILE: gitops.caFile } : {}),
    DATABASE_URL: databaseUrl,
    JWT_ACCESS_SECRET: process.env.JWT_ACCESS_SECRET ?? secrets.jwtAccessSecret,
    JWT_REFRESH_SECRET: process.env.JWT_REFRESH_SECRET ?? secrets.jwtRefreshSecret,
    INTERNAL_JWT_SECRET: process.env.INTERNAL_JWT_SECRET ?? secrets.internalJwtSecret,
    SECRET_ENCRYPTION_KEY: process.env.SECRET_ENCRYPTION_KEY ?? secrets.secretEncryptionKey,
    PUBLIC_URL: process.env.PUBLIC_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8000}${process.env.BASE_PATH ?? '/api'}`,
    // The local profile always has a super-admin: from configuration, or generated once.
    BOOTSTRAP_SUPER_ADMIN_EMAIL: process.env.BOOTSTRAP_SUPER_ADMIN_EMAIL ?? secrets.superAdmin.email,
    BOOTSTRAP_SUPER_ADMIN_USERNAME: process.env.BOOTSTRAP_SUPER_ADMIN_EMAIL ? process.env.BOOTSTRAP_SUPER_ADMIN_USERNAME : secrets.superAdmin.username,
    BOOTSTRAP_SUPER_ADMIN_PASSWORD: process.env.BOOTSTRAP_SUPER_ADMIN_EMAIL ? process.env.BOOTSTRAP_SUPER_ADMIN_PASSWORD : secrets.superAdmin.password,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  const children = new Map<SubgraphName, ChildProcess>();
  // Without RabbitMQ, events one service publishes reach the others through this process.
  const relayBus = relayBusBetween(() => children.values());
  let stopping = false;

  const stopAll = async () => {
    stopping = true;
    await Promise.all(
      [...children.values()].map(
        (child) =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      ),
    );
    await gitops?.stop();
    if (kubeSim) await kubeSim.stop();
    if (database) {
      say('stopping embedded PostgreSQL');
      await database.stop();
    }
  };

  say('starting subgraphs auth, cicd, platform (each runs its migrations)');
  const entry = fileURLToPath(import.meta.url);
  const urls = {} as Record<SubgraphName, string>;
  try {
    await Promise.all(
      SUBGRAPHS.map(
        (name) =>
          new Promise<void>((ready, reject) => {
            const child = fork(entry, [name], { env: { ...env, PORT: String(launcher.ports[name]), LAUNCHER_BUS: 'ipc' }, stdio: 'inherit' });
            children.set(name, child);
            child.on('message', (message) => relayBus(child, message));
            child.on('message', (message: { type?: string; url?: string }) => {
              if (message.type !== 'ready' || !message.url) return;
              urls[name] = message.url;
              say(`  ${name.padEnd(8)} ready at ${message.url}`);
              ready();
            });
            child.on('exit', (code, signal) => {
              if (stopping) return;
              reject(new Error(`${name} exited (${signal ?? `code ${code}`})`));
              if (urls[name]) {
                say(`${name} stopped unexpectedly; shutting down`);
                void stopAll().finally(() => process.exit(1));
              }
            });
          }),
      ),
    );
  } catch (error) {
    say(`start-up failed: ${(error as Error).message}`);
    await stopAll();
    process.exit(1);
  }

  const config = loadEdgeConfig({
    ...env,
    AUTH_SUBGRAPH_URL: process.env.AUTH_SUBGRAPH_URL ?? urls.auth,
    CICD_SUBGRAPH_URL: process.env.CICD_SUBGRAPH_URL ?? urls.cicd,
    PLATFORM_SUBGRAPH_URL: process.env.PLATFORM_SUBGRAPH_URL ?? urls.platform,
  });
  const { createEdge } = await import('./rest-facade/createEdge.js');
  const edge = await createEdge(config, createLogger({ service: 'edge', level: config.logLevel })).catch(async (error) => {
    say(`edge failed to start: ${(error as Error).message}`);
    await stopAll();
    process.exit(1);
  });
  const base = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}${config.basePath}`;
  say(`edge listening on ${edge.address}`);
  say(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  process.stdout.write(
    [
      '',
      `  REST base     ${base}   (e.g. ${base}/platform/api/v1/support/tickets)`,
      `  GraphQL       ${base}/graphql   (GraphiQL in a browser)`,
      `  API docs      ${base}/docs`,
      `  OpenAPI       ${base}/openapi.json`,
      `  Health        ${base}/healthz, ${base}/readyz`,
      `  Dev secrets   ${join(dataDir, 'dev-secrets.json')}`,
      ...(secretsCreated && !process.env.BOOTSTRAP_SUPER_ADMIN_EMAIL
        ? ['', `  Super-admin (generated, shown once; also in dev-secrets.json):`, `    username ${secrets.superAdmin.username}   password ${secrets.superAdmin.password}`]
        : []),
      '',
      '  Ctrl-C stops everything.',
      '',
    ].join('\n'),
  );

  onShutdown(logger, async () => {
    say('stopping');
    await edge.stop();
    await stopAll();
    say('stopped');
  });
}

async function main(): Promise<void> {
  const [command] = process.argv.slice(2);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === undefined) return runLocalStack();
  if (command === 'edge' || (SUBGRAPHS as string[]).includes(command)) return runService(command as ServiceName);
  fail(`unknown service "${command}"\n\n${USAGE}`);
}

main().catch((error) => {
  if (error instanceof ConfigError) fail(error.message);
  process.stderr.write(`start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
