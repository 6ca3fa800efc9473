/**
 * `npm run bench -- apps`: creating apps on GitOps, through the edge.
 *
 * The world is the e2e test's (tests/e2e/apps.test.ts), with kube-sim's simulated delays at zero:
 * kube-sim, a temporary bare fleet repository, the local applier (the Flux stand-in, polling
 * every 100 ms) and the local HTTPS ingress, in a child process of their own (apps-world.ts);
 * the stack of the tests (subgraphs as child processes, the edge in this process) pointed at
 * them; one tenant, CloudSpaces with a large quota.
 *
 * Phase 1, create-app throughput (world and stack A). Two targets on the same edge, interleaved
 * over ROUNDS rounds, their order rotated:
 *   create app  POST {base}/platform/api/v1/apps, every request a new app (a name of its own) in
 *               CloudSpace `load`: validation, the CloudSpace lookup, one transaction writing the
 *               app row and its outbox entry. The resource, the commit and the rollout follow
 *               asynchronously (relay, app controller, applier) while the load goes on;
 *   GET app     GET {base}/platform/api/v1/apps/{id} of one existing app: a cheap authenticated
 *               read through the same edge, gateway and subgraph, the baseline.
 * Every answer must be an app (autocannon's check; the create was checked to answer 201 before),
 * and the apps written must match the creates answered. The apps piled up by the load are then
 * followed for DRAIN_WINDOW_S: how fast the asynchronous side commits and applies them.
 *
 * Phase 2, create → reachable with the system quiet (world and stack B, fresh: the backlog of
 * phase 1 takes many minutes to drain, see its report). WARM_APPS apps are created and followed
 * unmeasured, then LATENCY_APPS one at a time in CloudSpace `quiet`, each followed by polling
 * `GET .../apps/{id}/deploy-status` every POLL_MS until `reachable`. Where the time goes comes
 * from both sides: what the client sees (the first poll showing the commit, Synced, a ready
 * replica, reachable) and what happened in kube-sim, noted by the world process as it happened
 * (the PlatformApp applied by the relay, the commit recorded on it by the app controller, the
 * Deployment created by the applier, the pod Ready, the Kustomization updated at the end of the
 * applier's pass). Then SEEDED_APPS apps go to CloudSpace `busy`, and LOADED_LATENCY_APPS more
 * are measured there, beside them in one virtual cluster. Last, what the app controller recorded
 * of all of them: their phase in the database and the `app.deployed` events.
 *
 * Numbers are reported, not asserted: a missed target still exits 0; errors exit 1.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Identity } from '../kernel/identity.js';
import { httpClient, type HttpResult } from '../tests/helpers/http.js';
import { startStack, type Stack } from '../tests/helpers/stack.js';
import { isApp } from './apps-answer.js';
import { createBody, type CreateContext } from './apps-create.js';
import type { Milestone, WorldOptions, WorldReady, WorldReply, WorldRequest, WorldStatus } from './apps-world.js';
import {
  Cleanup,
  ensureDatabase,
  formatTable,
  load,
  machine,
  measureRounds,
  median,
  printSummary,
  runBenchmark,
  say,
  useTestEnvironment,
  writeResults,
  type MeasuredTarget,
  type RunStats,
  type TargetSummary,
} from './harness.js';

const TENANT = 'be0c0000-0000-4000-8000-0000000000a1';
const IDENTITY: Identity = { subject: 'bench-user', tenantId: TENANT, roles: [], scopes: ['read', 'deploy'] };
const ROUNDS = 3;
const CONNECTIONS = 10;
/** Shorter than the other benchmarks' 2 s: every warm-up second of `create app` adds apps to the backlog. */
const WARMUP_SECONDS = 1;
/** The issue's target for the create request (the Git and Kubernetes work is asynchronous). */
const TARGET_P99_MS = 100;
/** How long the backlog of phase 1 is watched draining. */
const DRAIN_WINDOW_S = 30;
const WARM_APPS = 3;
const LATENCY_APPS = 10;
/** More than the 100 apps the app controller follows per pass (see the report of phase 2). */
const SEEDED_APPS = 110;
const SEED_CONCURRENCY = 4;
const LOADED_LATENCY_APPS = 3;
const POLL_MS = 25;
/** Longest a created app may take to be reachable before the benchmark fails. */
const REACHABLE_TIMEOUT_MS = 120_000;
/** How long a stack may take to stop before its fleet repository is moved away (see startSystem). */
const STOP_GRACE_MS = 10_000;
/** Warm-up runs of WARMUP_SECONDS per target before round 1 (as cicd-webhooks.ts, shorter). */
const FIRST_WARMUP_RUNS = 3;
/** How long the app controller gets to record every app Running at the end. */
const CONTROLLER_WAIT_MS = 20_000;
/** Longest the seeded apps may take to be committed and applied. */
const SEED_TIMEOUT_MS = 10 * 60_000;
const WORLD: Omit<WorldOptions, 'dir'> = {
  podReadyDelayMs: 0,
  clusterPhaseDelayMs: 0,
  applierIntervalMs: 100,
  // No drift correction during the run: a resync re-applies every folder, which would land in
  // the middle of a latency measurement.
  applierResyncMs: 3_600_000,
  ingressCacheMs: 0,
};
const BASE_DOMAIN = 'apps.bench.test';
const QUOTA = { pod_limit: 10_000, cpu_limit: '1000', memory_limit: '4000Gi' };
/** The per-token budget, raised so that it counts but never answers 429 (see tickets.ts). */
const EDGE_ENV = { RATE_LIMIT_PER_MINUTE: '10000000' };

/** The compiled modules autocannon's worker requires (this file is dist/bench/apps.js). */
const CREATE_MODULE = fileURLToPath(new URL('./apps-create.js', import.meta.url));
const ANSWER_MODULE = fileURLToPath(new URL('./apps-answer.js', import.meta.url));
const WORLD_MODULE = fileURLToPath(new URL('./apps-world.js', import.meta.url));

type TargetName = 'create app' | 'GET app';

const epochNow = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The world process
// ---------------------------------------------------------------------------------------------

interface World {
  ready: WorldReady;
  call<T>(request: DistributiveOmit<WorldRequest, 'id'>): Promise<T>;
  stop(): Promise<void>;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

async function startWorld(dir: string): Promise<World> {
  const options: WorldOptions = { dir, ...WORLD };
  const child: ChildProcess = fork(WORLD_MODULE, [JSON.stringify(options)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // The world stands for the cluster, the Git server and Flux, which run on other machines in
  // production: on this 2-core machine it yields the CPU to the platform being measured.
  if (child.pid !== undefined) setPriority(child.pid, 10);
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let exited: Error | undefined;
  child.on('exit', (code, signal) => {
    exited = new Error(`the world process exited (${signal ?? code})`);
    for (const p of pending.values()) p.reject(exited);
    pending.clear();
  });
  const ready = await new Promise<WorldReady>((resolve, reject) => {
    const onExit = () => reject(new Error('the world process (kube-sim, applier, ingress) exited during start-up'));
    child.once('exit', onExit);
    child.on('message', (message: WorldReady | WorldReply) => {
      if ('type' in message && message.type === 'ready') {
        child.off('exit', onExit);
        resolve(message);
        return;
      }
      const reply = message as WorldReply;
      const waiting = pending.get(reply.id);
      if (!waiting) return;
      pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(new Error(`world: ${reply.error}`));
    });
  });
  const call = <T>(request: DistributiveOmit<WorldRequest, 'id'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(exited);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ ...request, id });
    });
  return {
    ready,
    call,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await call({ type: 'stop' }).catch(() => undefined);
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Calls through the edge
// ---------------------------------------------------------------------------------------------

function expectStatus(result: HttpResult, status: number, what: string): Record<string, unknown> {
  if (result.status !== status || result.json === null || typeof result.json !== 'object') throw new Error(`${what}: answered ${result.status}: ${result.text.slice(0, 500)}`);
  return result.json as Record<string, unknown>;
}

async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(everyMs);
  }
}

interface Space {
  id: string;
  name: string;
  namespace: string;
}

async function readySpace(call: ReturnType<typeof httpClient>, token: string, name: string): Promise<Space> {
  const created = expectStatus(await call('POST', '/platform/api/v1/cloudspaces', { token, body: { name, ...QUOTA } }), 201, `creating CloudSpace ${name}`);
  return eventually(
    async () => {
      const space = expectStatus(await call('GET', `/platform/api/v1/cloudspaces/${String(created.id)}`, { token }), 200, `CloudSpace ${name}`);
      if (space.status === 'Failed') throw new Error(`CloudSpace ${name} failed: ${String(space.message)}`);
      return space.status === 'Ready' ? { id: String(space.id), name: String(space.name), namespace: String(space.namespace) } : undefined;
    },
    `CloudSpace ${name} Ready`,
    60_000,
  );
}

// ---------------------------------------------------------------------------------------------
// Create → reachable
// ---------------------------------------------------------------------------------------------

/** What the client saw, in ms after the POST was sent. */
interface ClientView {
  answered: number;
  committed: number;
  synced: number;
  ready: number;
  reachable: number;
  polls: number;
}

interface LatencySample {
  name: string;
  space: string;
  client: ClientView;
  /** What kube-sim went through, in ms after the POST was sent. */
  world: Partial<Record<Milestone, number>>;
}

const MILESTONE_ORDER: readonly Milestone[] = ['resource', 'committed', 'deployment', 'ingress', 'pod', 'podReady', 'synced'];

async function createToReachable(stack: Stack, world: World, space: Space, name: string): Promise<LatencySample & { id: string }> {
  const call = httpClient(() => stack.base);
  const token = await stack.token(IDENTITY);
  await world.call({ type: 'track', namespace: space.namespace, vcluster: 'main', name });
  const t0 = epochNow();
  const created = await call('POST', '/platform/api/v1/apps', { token, raw: createBody(space.id, name) });
  const answered = epochNow() - t0;
  const id = String(expectStatus(created, 201, `creating app ${name}`).id);
  const seen: Partial<Record<'committed' | 'synced' | 'ready' | 'reachable', number>> = {};
  let polls = 0;
  const deadline = t0 + REACHABLE_TIMEOUT_MS;
  for (;;) {
    const started = epochNow();
    const status = expectStatus(await call('GET', `/platform/api/v1/apps/${id}/deploy-status`, { token }), 200, `deploy-status of ${name}`);
    const at = epochNow() - t0;
    polls += 1;
    if (status.failure) throw new Error(`app ${name} failed: ${JSON.stringify(status)}`);
    if (status.commit && seen.committed === undefined) seen.committed = at;
    if (status.gitops === 'Synced' && seen.synced === undefined) seen.synced = at;
    if (Number(status.ready_replicas) >= 1 && seen.ready === undefined) seen.ready = at;
    if (status.reachable === true) {
      seen.reachable = at;
      break;
    }
    if (epochNow() > deadline) throw new Error(`app ${name} not reachable after ${REACHABLE_TIMEOUT_MS / 1000} s: ${JSON.stringify(status)}`);
    await sleep(Math.max(0, POLL_MS - (epochNow() - started)));
  }
  const reachable = seen.reachable;
  const client: ClientView = {
    answered,
    committed: seen.committed ?? reachable,
    synced: seen.synced ?? reachable,
    ready: seen.ready ?? reachable,
    reachable,
    polls,
  };
  const noted = await world.call<{ times: Partial<Record<Milestone, number>> }>({ type: 'times', namespace: space.namespace, name });
  const worldTimes: Partial<Record<Milestone, number>> = {};
  for (const step of MILESTONE_ORDER) {
    const t = noted.times[step];
    if (t !== undefined) worldTimes[step] = t - t0;
  }
  return { id, name, space: space.name, client, world: worldTimes };
}

// ---------------------------------------------------------------------------------------------
// The database
// ---------------------------------------------------------------------------------------------

async function appCounts(db: pg.Client, cloudspaceId: string): Promise<{ total: number; committed: number; phases: Record<string, number> }> {
  const { rows } = await db.query<{ phase: string; total: number; committed: number }>(
    'select phase, count(*)::int as total, count(last_commit)::int as committed from platform.app where cloudspace_id = $1 group by phase',
    [cloudspaceId],
  );
  return {
    total: rows.reduce((sum, r) => sum + r.total, 0),
    committed: rows.reduce((sum, r) => sum + r.committed, 0),
    phases: Object.fromEntries(rows.map((r) => [r.phase, r.total])),
  };
}

const phasesText = (phases: Record<string, number>) =>
  Object.entries(phases)
    .sort((a, b) => b[1] - a[1])
    .map(([phase, n]) => `${phase} ${n}`)
    .join(', ') || 'none';


// ---------------------------------------------------------------------------------------------
// One system: the world process and the stack pointed at it
// ---------------------------------------------------------------------------------------------

/** How long each stack took to stop, and whether the fleet repository had to go away for it to stop. */
const stops: Record<string, { seconds: number; neededRepoGone: boolean }> = {};

interface System {
  world: World;
  stack: Stack;
  call: ReturnType<typeof httpClient>;
  db: pg.Client;
}

async function startSystem(label: string, cleanup: Cleanup): Promise<System> {
  const dir = mkdtempSync(join(tmpdir(), `cloudops-bench-apps-${label}-`));
  cleanup.add(`the temporary directory of ${label}`, async () => rmSync(dir, { recursive: true, force: true }));
  say(`starting world ${label}: kube-sim (pod ready and cluster phase delays ${WORLD.podReadyDelayMs} ms), bare fleet repository, local applier (every ${WORLD.applierIntervalMs} ms), local ingress (cache ${WORLD.ingressCacheMs} ms)`);
  const world = await startWorld(dir);
  cleanup.add(`world ${label}`, () => world.stop());
  say(`  kube-sim at ${world.ready.kubeSimUrl}, ingress at ${world.ready.ingressAddress}, fleet repository ${world.ready.repoUrl}`);
  say(`starting stack ${label}: auth, cicd and platform subgraphs (child processes), edge (this process)`);
  const stack = await startStack(`bench_apps_${label}`, EDGE_ENV, {
    KUBECONFIG: world.ready.kubeconfigFile,
    FLUX_GIT_URL: world.ready.repoUrl,
    FLUX_GIT_WORKDIR: join(dir, 'platform-fleet'),
    APPS_BASE_DOMAIN: BASE_DOMAIN,
    APPS_INGRESS_ADDRESS: world.ready.ingressAddress,
    APPS_INGRESS_CA_FILE: world.ready.caFile,
    REGISTER_MANAGEMENT_CLUSTER: 'true',
  });
  cleanup.add(`stack ${label}`, async () => {
    // The platform subgraph stops once its app controller's pass in progress ends, and with a
    // backlog a pass commits every app of it. Should stopping take more than STOP_GRACE_MS, the
    // fleet repository is moved away: the next commit fails, which ends the pass.
    const t0 = epochNow();
    const stopped = stack.stop();
    const inTime = await Promise.race([stopped.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
    if (!inTime) {
      say(`  stack ${label} still stopping after ${STOP_GRACE_MS / 1000} s: moving the fleet repository away to end the app controller's pass`);
      await world.call({ type: 'remove-repo' });
      await stopped;
    }
    stops[label] = { seconds: (epochNow() - t0) / 1000, neededRepoGone: !inTime };
    say(`  stack ${label} stopped in ${stops[label].seconds.toFixed(1)} s${inTime ? '' : ' (once the fleet repository was gone)'}`);
  });
  say(`  edge at ${stack.base}, platform subgraph at ${stack.subgraphUrls.platform}`);
  const db = new pg.Client({ connectionString: stack.database.url });
  await db.connect();
  cleanup.add(`the pg client of ${label}`, () => db.end());
  return { world, stack, call: httpClient(() => stack.base), db };
}

/** A Cleanup of its own for one phase, run at the phase's end, or by `outer` if the phase fails. */
function phaseCleanup(outer: Cleanup, what: string): { cleanup: Cleanup; stop(): Promise<void> } {
  const cleanup = new Cleanup();
  const stop = async () => {
    const failures = await cleanup.run();
    if (failures.length > 0) throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
  };
  outer.add(what, stop);
  return { cleanup, stop };
}

// ---------------------------------------------------------------------------------------------
// Phase 1: create-app throughput, then the backlog draining
// ---------------------------------------------------------------------------------------------

interface Phase1 {
  summary: TargetSummary[];
  firstWarmups: Record<string, RunStats[]>;
  urls: Record<TargetName, string>;
  coldReachableMs: number;
  created: { apps: number; answered: number; sent: number; committedAtLoadEnd: number; loadS: number };
  drain: {
    windowS: number;
    committedAtStart: number;
    committedAtEnd: number;
    appliedAtEnd: number;
    commitsPerS: number;
    /** At the rate of the window, how long the rest of the backlog would take to commit. */
    projectedRemainingS: number;
    passes: WorldStatus['passes'];
  };
}

async function phase1(seconds: number, outer: Cleanup): Promise<Phase1> {
  const { cleanup, stop } = phaseCleanup(outer, 'phase 1 (world and stack A)');
  const { world, stack, call, db } = await startSystem('a', cleanup);
  const token = await stack.token(IDENTITY);
  say(`creating CloudSpace load for tenant ${TENANT} (pod_limit ${QUOTA.pod_limit}, cpu ${QUOTA.cpu_limit}, memory ${QUOTA.memory_limit})`);
  const loadSpace = await readySpace(call, token, 'load');
  say(`  Ready: ${loadSpace.namespace}`);

  say('creating the app the baseline reads, and following it to reachable');
  const first = await createToReachable(stack, world, loadSpace, 'baseline');
  say(`  reachable ${first.client.reachable.toFixed(0)} ms after its POST (cold)`);

  // Both targets once, outside autocannon: a create answers 201 with the app, the GET 200.
  const probe = await call('POST', '/platform/api/v1/apps', { token, raw: createBody(loadSpace.id, 'probe') });
  expectStatus(probe, 201, 'POST /apps');
  if (!isApp(probe.text) || (probe.json as { phase?: string }).phase !== 'Pending') throw new Error(`POST /apps answered an unexpected body: ${probe.text.slice(0, 500)}`);
  const read = await call('GET', `/platform/api/v1/apps/${first.id}`, { token });
  expectStatus(read, 200, 'GET /apps/{id}');
  if (!isApp(read.text)) throw new Error(`GET /apps/{id} answered an unexpected body: ${read.text.slice(0, 500)}`);
  say(`  create answers 201 (${Buffer.byteLength(probe.text)} B), GET app 200 (${Buffer.byteLength(read.text)} B)`);
  const before = await appCounts(db, loadSpace.id);

  const context: CreateContext = { cloudspaceId: loadSpace.id };
  const urls: Record<TargetName, string> = { 'create app': `${stack.base}/platform/api/v1/apps`, 'GET app': `${stack.base}/platform/api/v1/apps/${first.id}` };
  const targets: MeasuredTarget[] = [
    {
      name: 'create app',
      url: urls['create app'],
      method: 'POST',
      headers: async () => ({ authorization: `Bearer ${await stack.token(IDENTITY)}`, 'content-type': 'application/json' }),
      perRequest: { module: CREATE_MODULE, context: { ...context } },
      connections: CONNECTIONS,
      verifyBody: ANSWER_MODULE,
    },
    {
      name: 'GET app',
      url: urls['GET app'],
      method: 'GET',
      headers: async () => ({ authorization: `Bearer ${await stack.token(IDENTITY)}` }),
      connections: CONNECTIONS,
      verifyBody: ANSWER_MODULE,
    },
  ];
  const loadStarted = epochNow();
  say(`warming every target up for ${FIRST_WARMUP_RUNS} x ${WARMUP_SECONDS} s before the rounds`);
  const firstWarmups = new Map<string, RunStats[]>();
  for (const target of targets) {
    const runs: RunStats[] = [];
    for (let i = 0; i < FIRST_WARMUP_RUNS; i += 1) runs.push(await load(target, WARMUP_SECONDS, target));
    firstWarmups.set(target.name, runs);
    say(`  ${target.name.padEnd(10)} req/s by warm-up run: ${runs.map((r) => r.rps.toFixed(0)).join(' / ')}`);
  }
  const summary = await measureRounds(targets, seconds, ROUNDS, WARMUP_SECONDS);
  const loadEnded = epochNow();
  const creates = summary.find((s) => s.name === 'create app')!;

  // Every create autocannon sent, warm-ups included: each answered with an app wrote one; those
  // still unanswered when a run stopped may have been written or not.
  const createRuns: RunStats[] = [...firstWarmups.get('create app')!, ...creates.warmups, ...creates.runs];
  const answered = createRuns.reduce((sum, r) => sum + r.requests, 0);
  const sent = createRuns.reduce((sum, r) => sum + r.sent, 0);
  await sleep(1000);
  const afterLoad = await appCounts(db, loadSpace.id);
  const created = afterLoad.total - before.total;
  say(`the load created ${created} apps (${answered} creates answered, ${sent} sent, warm-ups included); ${afterLoad.committed} of the ${afterLoad.total} apps of load committed so far`);
  if (created < answered || created > sent) throw new Error(`create app: ${created} apps written for ${answered} creates answered and ${sent} sent`);

  say(`watching the backlog drain for ${DRAIN_WINDOW_S} s`);
  await world.call<WorldStatus>({ type: 'status' }); // forget the passes of the load
  const startCounts = await appCounts(db, loadSpace.id);
  const windowStarted = epochNow();
  const passes: WorldStatus['passes'] = [];
  let status: WorldStatus | undefined;
  let counts = startCounts;
  while (epochNow() - windowStarted < DRAIN_WINDOW_S * 1000) {
    await sleep(Math.min(10_000, DRAIN_WINDOW_S * 1000 - (epochNow() - windowStarted)));
    counts = await appCounts(db, loadSpace.id);
    status = await world.call<WorldStatus>({ type: 'status' });
    passes.push(...status.passes);
    const vc = status.vclusters.find((v) => v.namespace === loadSpace.namespace);
    const last = passes[passes.length - 1];
    say(
      `  ${((epochNow() - loadEnded) / 1000).toFixed(0)} s after the load: ${counts.committed}/${counts.total} committed, ${vc?.deployments ?? 0} deployed with ${vc?.readyPods ?? 0} pods Ready; ` +
        `last applier pass ${last ? `${(last.durationMs / 1000).toFixed(1)} s for ${last.applied} objects` : 'none'}`,
    );
  }
  const windowS = (epochNow() - windowStarted) / 1000;
  const commitsPerS = (counts.committed - startCounts.committed) / windowS;
  const vc = status?.vclusters.find((v) => v.namespace === loadSpace.namespace);
  const drain = {
    windowS,
    committedAtStart: startCounts.committed,
    committedAtEnd: counts.committed,
    appliedAtEnd: vc?.deployments ?? 0,
    commitsPerS,
    projectedRemainingS: commitsPerS > 0 ? (counts.total - counts.committed) / commitsPerS : Number.POSITIVE_INFINITY,
    passes,
  };
  say(`  ${commitsPerS.toFixed(1)} commits/s; ${counts.total - counts.committed} apps left to commit, some ${drain.projectedRemainingS.toFixed(0)} s more at that rate`);
  await stop();
  return {
    summary,
    firstWarmups: Object.fromEntries(firstWarmups),
    urls,
    coldReachableMs: first.client.reachable,
    created: { apps: created, answered, sent, committedAtLoadEnd: afterLoad.committed, loadS: (loadEnded - loadStarted) / 1000 },
    drain,
  };
}

// ---------------------------------------------------------------------------------------------
// Phase 2: create → reachable, quiet; then beside SEEDED_APPS apps; what the controller recorded
// ---------------------------------------------------------------------------------------------

interface LatencySummary {
  space: string;
  appsBeside: number;
  apps: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** Medians of each step, ms after the POST. */
  steps: Record<string, number | null>;
  samples: LatencySample[];
}

function summarize(space: string, appsBeside: number, list: LatencySample[]): LatencySummary {
  const reach = list.map((s) => s.client.reachable);
  const step = (pick: (s: LatencySample) => number | undefined) => {
    const values = list.map(pick).filter((v): v is number => v !== undefined);
    return values.length ? median(values) : null;
  };
  return {
    space,
    appsBeside,
    apps: list.length,
    medianMs: median(reach),
    minMs: Math.min(...reach),
    maxMs: Math.max(...reach),
    steps: {
      'POST answered 201': step((s) => s.client.answered),
      'PlatformApp applied (relay)': step((s) => s.world.resource),
      'commit recorded on it (app controller)': step((s) => s.world.committed),
      'commit seen in deploy-status': step((s) => s.client.committed),
      'Deployment created (applier pass)': step((s) => s.world.deployment),
      'Ingress created (same pass)': step((s) => s.world.ingress),
      'pod Ready (kube-sim)': step((s) => s.world.podReady),
      'Kustomization updated (pass done)': step((s) => s.world.synced),
      'Synced seen in deploy-status': step((s) => s.client.synced),
      'ready replica seen in deploy-status': step((s) => s.client.ready),
      'reachable seen in deploy-status': step((s) => s.client.reachable),
      'deploy-status polls': step((s) => s.client.polls),
    },
    samples: list,
  };
}

async function measureLatency(system: System, space: Space, prefix: string, count: number): Promise<(LatencySample & { id: string })[]> {
  const samples: (LatencySample & { id: string })[] = [];
  for (let i = 1; i <= count; i += 1) {
    const sample = await createToReachable(system.stack, system.world, space, `${prefix}-${i}`);
    samples.push(sample);
    const w = sample.world;
    say(
      `  ${sample.name.padEnd(6)} 201 after ${sample.client.answered.toFixed(0)} ms, reachable after ${sample.client.reachable.toFixed(0)} ms ` +
        `(resource ${fmt(w.resource)}, committed ${fmt(w.committed)}, deployment ${fmt(w.deployment)}, pod Ready ${fmt(w.podReady)}, pass done ${fmt(w.synced)})`,
    );
    await sleep(300);
  }
  return samples;
}

interface ControllerRecord {
  /** Seconds waited for the database to show every app Running. */
  waitedS: number;
  apps: number;
  phases: Record<string, number>;
  /** Apps app.deployed was emitted for. */
  appDeployed: number;
  /** Apps not Running in the database, with what deploy-status answers for them. */
  notRunning: { name: string; phase: string; deployStatus: string; reachable: boolean; lastCommit: string | null; reportedCommit: string | null; inControllerQuery: boolean }[];
  /** Of the apps not Running, how many are among the rows the app controller's follow-up query (reportOutcomes: limit 100, no order) answers now. */
  notRunningInControllerQuery: number;
  /** The rows that query answers, and how many of them the controller skips as done (Running, Failed or Stopped, their last commit reported). */
  controllerQueryRows: number;
  controllerQueryRowsDone: number;
}

interface Phase2 {
  quiet: LatencySummary;
  busy: LatencySummary;
  seeding: { apps: number; committedAndReadyS: number; controllerSettledS: number; settled: boolean };
  controller: ControllerRecord;
}

/** The phase of every app in the database, and how many apps app.deployed was emitted for. */
async function recorded(db: pg.Client): Promise<{ rows: { id: string; name: string; phase: string; last_commit: string | null; reported_commit: string | null }[]; deployed: number }> {
  const { rows } = await db.query<{ id: string; name: string; phase: string; last_commit: string | null; reported_commit: string | null }>(
    'select id, name, phase, last_commit, reported_commit from platform.app order by created_at',
  );
  const deployed = (await db.query<{ n: number }>("select count(distinct payload->'data'->>'app_id')::int as n from platform.outbox_message where routing_key = 'app.deployed'")).rows[0]?.n ?? 0;
  return { rows, deployed };
}

/** Waits until the apps' phases and app.deployed stop changing for `quietMs` (at most `timeoutMs`); answers whether they did. */
async function controllerSettled(db: pg.Client, quietMs: number, timeoutMs: number): Promise<boolean> {
  const deadline = epochNow() + timeoutMs;
  const fingerprint = async () => {
    const { rows, deployed } = await recorded(db);
    return `${deployed}|${rows.map((r) => `${r.phase}:${r.reported_commit ?? ''}`).join(',')}`;
  };
  let last = await fingerprint();
  let since = epochNow();
  while (epochNow() < deadline) {
    await sleep(500);
    const now = await fingerprint();
    if (now !== last) {
      last = now;
      since = epochNow();
    } else if (epochNow() - since >= quietMs) {
      return true;
    }
  }
  return false;
}

async function phase2(outer: Cleanup): Promise<Phase2> {
  const { cleanup, stop } = phaseCleanup(outer, 'phase 2 (world and stack B)');
  const system = await startSystem('b', cleanup);
  const { world, stack, call, db } = system;
  const token = await stack.token(IDENTITY);
  say('creating CloudSpaces quiet and busy');
  const quiet = await readySpace(call, token, 'quiet');
  const busy = await readySpace(call, token, 'busy');
  say(`  both Ready: ${quiet.namespace}, ${busy.namespace}`);

  say(`warming up: ${WARM_APPS} apps created to reachable in quiet, not measured`);
  await measureLatency(system, quiet, 'w', WARM_APPS);
  say(`create → reachable in quiet: ${LATENCY_APPS} apps one at a time, deploy-status polled every ${POLL_MS} ms`);
  const quietSamples = await measureLatency(system, quiet, 'q', LATENCY_APPS);

  say(`seeding ${SEEDED_APPS} apps in busy (${SEED_CONCURRENCY} at a time) and waiting until every one is committed, applied and its pod Ready`);
  const seedStarted = epochNow();
  let next = 0;
  const seeder = async () => {
    for (let i = ++next; i <= SEEDED_APPS; i = ++next) {
      const r = await call('POST', '/platform/api/v1/apps', { token: await stack.token(IDENTITY), raw: createBody(busy.id, `s-${i}`) });
      expectStatus(r, 201, `seeding app s-${i}`);
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, seeder));
  await eventually(
    async () => {
      const counts = await appCounts(db, busy.id);
      const status = await world.call<WorldStatus>({ type: 'status' });
      const vc = status.vclusters.find((v) => v.namespace === busy.namespace);
      const done = counts.committed === SEEDED_APPS && status.uncommitted === 0 && status.applier?.sha === status.head && vc?.deployments === SEEDED_APPS && vc.readyPods >= SEEDED_APPS;
      return done ? true : undefined;
    },
    `the ${SEEDED_APPS} seeded apps committed and applied`,
    SEED_TIMEOUT_MS,
    500,
  );
  const committedAndReadyS = (epochNow() - seedStarted) / 1000;
  say(`  done ${committedAndReadyS.toFixed(1)} s after the first POST; waiting for the app controller to settle (phases and app.deployed unchanged for 3 s, at most 60 s)`);
  const settled = await controllerSettled(db, 3000, 60_000);
  const seeding = { apps: SEEDED_APPS, committedAndReadyS, controllerSettledS: (epochNow() - seedStarted) / 1000, settled };
  say(`  ${settled ? 'settled' : 'still changing'} ${seeding.controllerSettledS.toFixed(1)} s after the first POST`);
  say(`create → reachable in busy, beside the ${SEEDED_APPS} seeded apps in its virtual cluster: ${LOADED_LATENCY_APPS} apps one at a time`);
  const busySamples = await measureLatency(system, busy, 'l', LOADED_LATENCY_APPS);

  // What the app controller recorded: every app above was reachable (or had its pod Ready with
  // the applier at the head); give it CONTROLLER_WAIT_MS to record them all Running.
  const waitedStarted = epochNow();
  say(`waiting for the app controller to record every app Running (app.deployed), at most ${CONTROLLER_WAIT_MS / 1000} s`);
  let seen = await recorded(db);
  while (seen.rows.some((r) => r.phase !== 'Running') && epochNow() - waitedStarted < CONTROLLER_WAIT_MS) {
    await sleep(1000);
    seen = await recorded(db);
  }
  const waitedS = (epochNow() - waitedStarted) / 1000;
  // The rows the controller's follow-up query (app.controller.ts, reportOutcomes) answers now.
  const followedRows = (
    await db.query<{ id: string; done: boolean }>(
      "select id, (phase in ('Running', 'Failed', 'Stopped') and reported_commit is not distinct from last_commit) as done from platform.app where last_commit is not null and phase not in ('Deleting') limit 100",
    )
  ).rows;
  const followed = new Set(followedRows.map((r) => r.id));
  const phases: Record<string, number> = {};
  for (const r of seen.rows) phases[r.phase] = (phases[r.phase] ?? 0) + 1;
  const notRunning: ControllerRecord['notRunning'] = [];
  for (const r of seen.rows.filter((row) => row.phase !== 'Running')) {
    const status = expectStatus(await call('GET', `/platform/api/v1/apps/${r.id}/deploy-status`, { token: await stack.token(IDENTITY) }), 200, `deploy-status of ${r.name}`);
    notRunning.push({ name: r.name, phase: r.phase, deployStatus: String(status.phase), reachable: status.reachable === true, lastCommit: r.last_commit, reportedCommit: r.reported_commit, inControllerQuery: followed.has(r.id) });
  }
  const controller: ControllerRecord = {
    waitedS,
    apps: seen.rows.length,
    phases,
    appDeployed: seen.deployed,
    notRunning,
    notRunningInControllerQuery: notRunning.filter((n) => n.inControllerQuery).length,
    controllerQueryRows: followedRows.length,
    controllerQueryRowsDone: followedRows.filter((r) => r.done).length,
  };
  say(
    `  ${seen.rows.length} apps; in the database ${phasesText(phases)}; app.deployed emitted for ${seen.deployed}; of the ${notRunning.length} not Running, ` +
      `${notRunning.filter((n) => n.reachable).length} reachable by deploy-status, ${controller.notRunningInControllerQuery} among the 100 rows the controller follows`,
  );
  await stop();
  return {
    quiet: summarize('quiet', WARM_APPS, quietSamples),
    busy: summarize('busy', SEEDED_APPS, busySamples),
    seeding,
    controller,
  };
}

// ---------------------------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------------------------

export function run(): Promise<void> {
  return runBenchmark('the stacks, the world processes and PostgreSQL', measure);
}

async function measure(seconds: number, cleanup: Cleanup): Promise<void> {
  say(
    `apps benchmark: ${ROUNDS} rounds x 2 targets x (${WARMUP_SECONDS} s warm-up + ${seconds} s), ${CONNECTIONS} connections, then ${DRAIN_WINDOW_S} s of backlog; ` +
      `then on a fresh system ${LATENCY_APPS} + ${LOADED_LATENCY_APPS} apps created to reachable one at a time; ${cpus().length} CPUs, node ${process.version}`,
  );
  const databaseLabel = await ensureDatabase(cleanup);
  useTestEnvironment();

  const one = await phase1(seconds, cleanup);
  const two = await phase2(cleanup);

  const of = (name: TargetName) => one.summary.find((s) => s.name === name)!;
  const create = of('create app');
  const get = of('GET app');
  const ratio = create.medianRps / get.medianRps;
  const byRound = create.runs.map((r, i) => r.rps / get.runs[i]!.rps);
  const p99Pass = create.medianP99Ms <= TARGET_P99_MS;
  const passes = one.drain.passes;
  const longestPass = passes.reduce<WorldStatus['passes'][number] | undefined>((a, p) => (a && a.durationMs >= p.durationMs ? a : p), undefined);

  const latencyLines: string[] = [];
  for (const l of [two.quiet, two.busy]) {
    const beside = l.space === 'busy' ? `the ${l.appsBeside} seeded apps, then each measured one, beside them` : `${l.appsBeside} warm-up apps, then each measured one, beside them`;
    latencyLines.push(`create → reachable in ${l.space} (${beside} in its virtual cluster): median ${l.medianMs.toFixed(0)} ms, min ${l.minMs.toFixed(0)}, max ${l.maxMs.toFixed(0)} (${l.apps} apps); each step, median ms after the POST:`);
    latencyLines.push(...formatTable([['step', 'ms'], ...Object.entries(l.steps).map(([step, ms]) => [step, ms === null ? '-' : ms.toFixed(0)])], [0]).map((line) => `  ${line}`));
  }
  const c = two.controller;
  printSummary(one.summary, [
    `create app / GET app:  ${ratio.toFixed(2)}x   (by round: ${byRound.map((r) => r.toFixed(2)).join(' / ')})`,
    `create app p50 by round: ${create.runs.map((r) => r.p50Ms).join(' / ')} ms; p99 by round: ${create.runs.map((r) => r.p99Ms).join(' / ')} ms`,
    `apps created by the load: ${one.created.apps} in ${one.created.loadS.toFixed(0)} s (${one.created.answered} answered, ${one.created.sent} sent, warm-ups included); ${one.created.committedAtLoadEnd} committed by the load's end`,
    `backlog: ${one.drain.commitsPerS.toFixed(1)} commits/s over the ${one.drain.windowS.toFixed(0)} s after the load (${one.drain.committedAtStart} → ${one.drain.committedAtEnd} committed), ` +
      `some ${(one.drain.projectedRemainingS / 60).toFixed(1)} min more to commit the rest at that rate; longest applier pass ${longestPass ? `${(longestPass.durationMs / 1000).toFixed(1)} s for ${longestPass.applied} objects` : '-'}`,
    '',
    ...latencyLines,
    '',
    `seeding busy: ${two.seeding.apps} apps committed, applied and Ready ${two.seeding.committedAndReadyS.toFixed(1)} s after the first POST; the app controller ${two.seeding.settled ? 'settled' : 'still changing'} at ${two.seeding.controllerSettledS.toFixed(1)} s`,
    `app controller, ${c.waitedS.toFixed(0)} s after the last app was reachable: ${c.apps} apps; in the database ${phasesText(c.phases)}; app.deployed emitted for ${c.appDeployed}`,
    ...(c.notRunning.length > 0
      ? [
          `  not Running in the database: ${c.notRunning.length} (${c.notRunning.slice(0, 8).map((n) => `${n.name} ${n.phase}`).join(', ')}${c.notRunning.length > 8 ? ', ...' : ''}); ` +
            `deploy-status answers ${phasesText(Object.fromEntries([...new Set(c.notRunning.map((n) => n.deployStatus))].map((p) => [p, c.notRunning.filter((n) => n.deployStatus === p).length])))} for them; ` +
            `${c.notRunningInControllerQuery} of them among the ${c.controllerQueryRows} rows the controller's follow-up query (limit 100, no order) answers, ${c.controllerQueryRowsDone} of which it skips as done`,
        ]
      : []),
    `stopping: ${Object.entries(stops)
      .map(([label, st]) => `stack ${label} ${st.seconds.toFixed(1)} s${st.neededRepoGone ? ` (still stopping after ${STOP_GRACE_MS / 1000} s, until the fleet repository was moved away: the app controller's stop() waits for its pass in progress)` : ''}`)
      .join('; ')}`,
    '',
    `target: create-app p99 <= ${TARGET_P99_MS} ms: ${p99Pass ? 'PASS' : 'MISS'} (median p99 ${create.medianP99Ms} ms over ${ROUNDS} rounds at ${create.medianRps.toFixed(0)} req/s)`,
    `create → reachable on kube-sim, delays zero (reported, no target): median ${two.quiet.medianMs.toFixed(0)} ms, max ${two.quiet.maxMs.toFixed(0)} ms`,
  ]);

  writeResults('apps', {
    benchmark: 'apps',
    date: new Date().toISOString(),
    machine: machine(),
    settings: {
      seconds,
      warmupSeconds: WARMUP_SECONDS,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      drainWindowS: DRAIN_WINDOW_S,
      warmApps: WARM_APPS,
      latencyApps: LATENCY_APPS,
      seededApps: SEEDED_APPS,
      loadedLatencyApps: LOADED_LATENCY_APPS,
      pollMs: POLL_MS,
      world: WORLD,
      quota: QUOTA,
      nodeEnv: process.env.NODE_ENV ?? null,
      database: databaseLabel,
    },
    targets: Object.fromEntries(
      one.summary.map((s) => [
        s.name,
        {
          url: one.urls[s.name as TargetName],
          medianRps: s.medianRps,
          medianP50Ms: median(s.runs.map((r) => r.p50Ms)),
          medianP99Ms: s.medianP99Ms,
          rounds: s.runs,
          warmups: s.warmups,
          warmUpBeforeRounds: one.firstWarmups[s.name],
        },
      ]),
    ),
    ratios: { createToGet: ratio, byRound },
    created: one.created,
    coldCreateToReachableMs: one.coldReachableMs,
    backlog: one.drain,
    createToReachable: { quiet: two.quiet, busy: two.busy },
    seeding: two.seeding,
    controller: two.controller,
    stops,
    target: { rule: `create app p99 <= ${TARGET_P99_MS} ms`, pass: p99Pass, medianP99Ms: create.medianP99Ms },
  });
}

function fmt(ms: number | undefined): string {
  return ms === undefined ? '-' : `${ms.toFixed(0)} ms`;
}
