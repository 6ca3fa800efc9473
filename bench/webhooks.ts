/**
 * `npm run bench -- webhooks`: outbound webhook events fanned out and delivered, signed, to a local
 * HTTPS receiver, against that receiver's own maximum accept rate in the same run.
 *
 * The pipeline is the platform subgraph's own, in this process (what `subgraphs/platform/setup.ts`
 * starts): an event bus (RabbitMQ when RABBITMQ_URL is set, with queues of a prefix of their own,
 * deleted at the end; the in-process bus otherwise) → `startEventConsumer` → `fanOut` (one
 * pending delivery per matching subscription, in a fresh database) → `startDispatcher`
 * (WEBHOOK_CONCURRENCY in flight, 64 by default) → an HTTPS receiver in a worker thread of this
 * process (`webhooks-receiver.ts`), which verifies every signature (HMAC-SHA256 over the exact
 * bytes, constant-time compare, 300 s tolerance: `webhooks-signature.ts`, checked against the
 * stripe package's verifier before measuring) and answers 200.
 *
 * Targets:
 *   pipeline      events published open-loop at a steady rate (every 10 ms, what is due), 5 tenants
 *                 with 2 subscriptions each, so every event is 2 deliveries. Each event's
 *                 `occurred_at` is its publish time, also carried in `data.published_at_ms`. After a
 *                 2 s warm-up, BENCH_SECONDS are measured: deliveries recorded `succeeded` in the
 *                 database per second, and the event-to-first-attempt latency (arrival at the
 *                 receiver − publish time) of the events published in the window. Then publishing
 *                 stops, everything is drained and checked: every delivery succeeded on its first
 *                 and only attempt, the receiver saw each (event, subscription) once, from the
 *                 right tenant, with no signature refused.
 *   receiver max  the same receiver under a closed loop from this thread: WEBHOOK_CONCURRENCY
 *                 callers on an undici Agent configured like the dispatcher's (the test CA, 32
 *                 keep-alive connections), every request a distinct envelope of the same shape and
 *                 size, signed like a delivery (the project's `signatureHeader`), with the
 *                 delivery headers. What the receiver accepts at most, with no database or bus.
 * Before the rounds, a ramp of offered rates (open loop, as `pipeline`) shows where the pipeline
 * stops keeping up; it also warms it up. Then ROUNDS rounds, the two targets interleaved and
 * their order rotated; medians are reported.
 *
 * BENCH_EVENTS_PER_S sets the rounds' offered rate (events per second; twice as many deliveries),
 * 600 by default: 1,200 deliveries/s, above the 1,000/s target. WEBHOOK_CONCURRENCY as the
 * platform reads it (64 by default).
 *
 * Besides the rates, every pipeline run reports where an event's time goes (publish → fan-out, the
 * delivery row's `created_at`; → the dispatcher starting the POST, its attempt's `attempted_at`;
 * → arrival), how late the publisher's timer ran (stalls of the main thread), the SQL statements
 * per delivery by purpose (knex's `query` event), the queries waiting for the ORM's pool, the
 * event-loop utilization of both threads and, on Linux, the cores used by this process, the
 * bench database's backends, a local broker and everything else: a run where something else used
 * more than a quarter of a core is flagged DISTURBED (on 2 cores it moves the numbers a lot).
 * `receiver max` is bounded by whichever of its two threads saturates first; on 2 cores that is
 * the client (main thread event loop near 1), so it is a lower bound of the receiver's own limit.
 * Results carry each window on process.hrtime's clock (`windowMonotonicUs`), the clock of the
 * timestamps of `node --cpu-prof` profiles, so that a profile of the whole run can be cut to them.
 *
 * Numbers are reported, not asserted: a missed target exits 0. Errors exit 1: a delivery not
 * succeeded once on its first attempt, a missing, duplicated or misrouted delivery, a refused
 * signature, a non-200 answer to the baseline, a warning or error logged by the pipeline.
 */
import amqp from 'amqplib';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { rootCertificates } from 'node:tls';
import { Worker } from 'node:worker_threads';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import Stripe from 'stripe';
import { Agent, request } from 'undici';
import { createEventBus, EXCHANGES, type EventBus } from '../kernel/bus.js';
import type { PlatformConfig } from '../kernel/config.js';
import { createSecretBox } from '../kernel/crypto.js';
import { createOrm, migrate } from '../kernel/db.js';
import type { Identity } from '../kernel/identity.js';
import { tenantEntityManager } from '../kernel/tenancy.js';
import { platformSubgraph } from '../subgraphs/platform/index.js';
import type { PlatformRuntime } from '../subgraphs/platform/runtime.js';
import { DELIVERY_HEADERS, DELIVERY_TIMEOUT_MS, startDispatcher, type Dispatcher } from '../subgraphs/platform/webhooks/delivery.dispatcher.js';
import { startEventConsumer, WEBHOOK_QUEUES } from '../subgraphs/platform/webhooks/delivery.fanout.js';
import { signatureHeader } from '../subgraphs/platform/webhooks/signature.js';
import { guardedLookup } from '../subgraphs/platform/webhooks/ssrf-guard.js';
import { WebhookSubscriptionService } from '../subgraphs/platform/webhooks/webhook.service.js';
import { createTestDatabase } from '../tests/helpers/database.js';
import { createTestPki, type TestPki } from '../tests/helpers/https-receiver.js';
import { ensureDatabase, formatTable, machine, median, runBenchmark, say, writeResults, type Cleanup } from './harness.js';
import type { Arrival, Collected, ReceiverData, ReceiverMessage, Rejection } from './webhooks-receiver.js';
import { signatureProblem } from './webhooks-signature.js';

const ROUNDS = 3;
const WARMUP_SECONDS = 2;
const TENANTS = 5;
const SUBSCRIPTIONS_PER_TENANT = 2;
const EVENT_TYPE = 'incident.created';
/** The issue's targets, on 2 cores. */
const TARGET_DELIVERIES_PER_S = 1000;
const TARGET_P99_MS = 1000;
/** Offered rates of the ramp, as fractions of the rounds' rate. */
const RAMP_FRACTIONS = [1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1, 7 / 6, 8 / 6];
const RAMP_STEP_SECONDS = 3;
/** A step keeps up when it records at least this share of the deliveries offered, with p99 within the target. */
const KEEPS_UP = 0.95;
/** Draining fails when nothing moves for this long. */
const STALL_MS = 15_000;
/** Signature checks timed in this thread, stripe's and the receiver's, before anything starts. */
const VERIFICATIONS = 5_000;

const RECEIVER_MODULE = new URL('./webhooks-receiver.js', import.meta.url);
const wallClock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

function integerFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Measuring helpers

interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function latency(values: number[]): Latency {
  if (values.length === 0) return { count: 0, p50Ms: Number.NaN, p99Ms: Number.NaN, maxMs: Number.NaN };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!.toFixed(1));
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: Number(sorted[sorted.length - 1]!.toFixed(1)) };
}

/** CPU of the machine, of this process (both threads), of the bench database's backends and of a local broker. */
interface CpuSample {
  at: number;
  machineBusyTicks: number;
  process: NodeJS.CpuUsage;
  backends: Map<number, number>;
  brokerTicks: number;
}

/** Whole cores used between two samples. */
interface CpuShare {
  machine: number;
  /** This process: the pipeline and the publisher (main thread), the receiver (worker thread). */
  node: number;
  postgres: number;
  /** RabbitMQ's beam.smp, when the broker runs on this machine. */
  broker: number;
  /** The rest of the machine: PostgreSQL's own processes, the kernel's interrupts, anything else running. */
  other: number;
}

const CLOCK_TICKS = 100;
/** Cores used by anything else during a window beyond which its numbers are flagged as disturbed. */
const DISTURBED_CORES = 0.25;

function procTicks(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** The pids of a RabbitMQ broker on this machine (Linux), when RABBITMQ_URL points at the loopback. */
function localBrokerPids(rabbitUrl: string | undefined): number[] {
  if (!rabbitUrl || !['127.0.0.1', 'localhost', '[::1]'].includes(new URL(rabbitUrl).hostname)) return [];
  try {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'beam.smp';
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

async function cpuSample(db: pg.Client, brokerPids: readonly number[]): Promise<CpuSample | null> {
  try {
    const { rows } = await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = line.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = line[3]! + line[4]!;
    const backends = new Map<number, number>();
    for (const { pid } of rows) {
      const ticks = procTicks(pid);
      if (ticks !== undefined) backends.set(pid, ticks);
    }
    const brokerTicks = brokerPids.reduce((sum, pid) => sum + (procTicks(pid) ?? 0), 0);
    return { at: wallClock(), machineBusyTicks: total - idle, process: process.cpuUsage(), backends, brokerTicks };
  } catch {
    return null; // not Linux, or /proc unreadable: the split is left out
  }
}

function cpuShare(a: CpuSample | null, b: CpuSample | null): CpuShare | null {
  if (!a || !b) return null;
  const seconds = (b.at - a.at) / 1000;
  const cores = (b.machineBusyTicks - a.machineBusyTicks) / CLOCK_TICKS / seconds;
  const node = (b.process.user - a.process.user + b.process.system - a.process.system) / 1e6 / seconds;
  let pgTicks = 0;
  // Backends started during the window count whole; those that ended are lost (rare: a pool of 10).
  for (const [pid, ticks] of b.backends) pgTicks += ticks - (a.backends.get(pid) ?? 0);
  const postgres = pgTicks / CLOCK_TICKS / seconds;
  const broker = (b.brokerTicks - a.brokerTicks) / CLOCK_TICKS / seconds;
  const round = (n: number) => Number(n.toFixed(2));
  return { machine: round(cores), node: round(node), postgres: round(postgres), broker: round(broker), other: round(Math.max(0, cores - node - postgres - broker)) };
}

const cpuText = (c: CpuShare | null) =>
  c
    ? `cores busy ${c.machine} (node ${c.node}, postgres backends ${c.postgres}${c.broker > 0 ? `, broker ${c.broker}` : ''}, other ${c.other})${c.other > DISTURBED_CORES ? ' [DISTURBED: other processes]' : ''}`
    : 'cpu split unavailable';

/** SQL statements the pipeline sends, by what they are for (knex's `query` event). */
type Statements = Record<string, number>;

function classifyStatement(sql: string): string {
  const text = sql.trim().toLowerCase();
  if (text.includes('with seen as')) return 'fan-out';
  if (text.startsWith('with claimed as')) return 'claim (with its subscriptions)';
  if (text.includes('webhook_subscription')) return 'load subscriptions';
  if (text.includes('webhook_delivery_attempt')) return 'record: insert attempts';
  if (text.includes('from unnest')) return 'record: update deliveries';
  if (/^(begin|commit|rollback)/.test(text)) return `record: ${text.replace(/;$/, '')}`;
  return 'other';
}

const minusStatements = (b: Statements, a: Statements): Statements => Object.fromEntries(Object.entries(b).map(([k, v]) => [k, v - (a[k] ?? 0)]).filter(([, v]) => (v as number) > 0));

// ---------------------------------------------------------------------------------------------
// The receiver in its worker thread

interface Receiver {
  url: string;
  setSecrets(secrets: Record<string, string>): Promise<void>;
  /** What arrived since the previous call, and the receiver thread's event-loop utilization meanwhile. */
  collect(): Promise<Collected>;
  close(): Promise<void>;
}

async function startReceiver(pki: TestPki): Promise<Receiver> {
  const data: ReceiverData = { role: 'webhooks-receiver', key: pki.key, cert: pki.cert, secrets: {} };
  const worker = new Worker(RECEIVER_MODULE, { workerData: data });
  let failure: Error | undefined;
  const waiting: ((c: Collected) => void)[] = [];
  const failed: ((e: Error) => void)[] = [];
  const fail = (error: Error) => {
    failure ??= error;
    for (const reject of failed.splice(0)) reject(error);
    waiting.length = 0;
  };
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (m: ReceiverMessage) => (m.type === 'ready' ? resolve(m.port) : reject(new Error(`receiver said ${m.type} first`))));
  });
  worker.on('error', (error) => fail(new Error(`the receiver's worker failed: ${error.message}`)));
  worker.on('exit', (code) => fail(new Error(`the receiver's worker exited (${code})`)));
  worker.on('message', (m: ReceiverMessage) => {
    if (m.type === 'collected') {
      failed.shift();
      waiting.shift()?.(m);
    }
  });
  const collect = () =>
    new Promise<Collected>((resolve, reject) => {
      if (failure) return reject(failure);
      waiting.push(resolve);
      failed.push(reject);
      worker.postMessage({ type: 'collect' });
    });
  return {
    url: `https://localhost:${port}`,
    async setSecrets(secrets) {
      worker.postMessage({ type: 'secrets', secrets });
      await collect(); // messages are handled in order: once this answers, the secrets are set
    },
    collect,
    async close() {
      if (failure) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ type: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Set-up

interface Subscription {
  id: string;
  tenantId: string;
  path: string;
  secret: string;
}

interface Bench {
  db: pg.Client;
  /**
   * What publishes the events: on RabbitMQ a connection of its own, as the services that publish
   * (their outbox relays) are other processes; the in-process bus is one object for both.
   */
  publisher: EventBus;
  dispatcher: Dispatcher;
  receiver: Receiver;
  subscriptions: Subscription[];
  tenants: string[];
  byTenant: Map<string, Subscription[]>;
  byPath: Map<string, Subscription>;
  statements: Statements;
  /** Warnings and errors the pipeline logged. */
  logged: string[];
  caPem: string;
  concurrency: number;
  /** A local broker's processes, for the CPU split. */
  brokerPids: number[];
  /** Queries waiting for a connection of the ORM's pool (shared by the fan-out and the dispatcher). */
  poolWaiting(): number;
}

const tenantId = (t: number) => `be0c0000-0000-4000-8000-0000000001${(0xa0 + t).toString(16)}`;

/** The envelope as the publisher sends it and the dispatcher POSTs it (readEnvelope's key order). */
function envelope(id: string, tenant: string, publishedAt: number): Record<string, unknown> {
  return {
    id,
    type: EVENT_TYPE,
    occurred_at: new Date(Math.floor(publishedAt)).toISOString(),
    tenant_id: tenant,
    data: {
      incident_id: `inc_${id}`,
      cluster_id: 'bench-cluster-eu-1',
      title: 'Pods of payments-api are crash-looping (OOMKilled)',
      severity: 'high',
      status: 'open',
      category: 'availability',
      namespace: 'payments',
      affected_service: 'payments-api',
      url: `https://console.example.com/incidents/inc_${id}`,
      published_at_ms: publishedAt,
    },
  };
}

/**
 * The receiver's check must be stripe's: both accept a delivery signed by the project's
 * `signatureHeader` (one secret, and two during a rotation) and both refuse a wrong secret, a
 * changed body and an old timestamp. Answers µs per check of each, for the record.
 */
function checkVerifier(): { stripeMicroseconds: number; receiverMicroseconds: number; bodyBytes: number } {
  const stripe = new Stripe('sk_test_unused');
  const stripeAccepts = (body: string, header: string, secret: string) => {
    try {
      stripe.webhooks.constructEvent(body, header, secret, 300);
      return true;
    } catch {
      return false;
    }
  };
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  const other = `whsec_${randomBytes(32).toString('base64url')}`;
  const body = JSON.stringify(envelope(`evt_${randomUUID()}`, tenantId(0), wallClock()));
  const now = Math.floor(Date.now() / 1000);
  const cases: [string, string, string, boolean][] = [
    ['signed with the secret', signatureHeader(body, [secret]), body, true],
    ['signed with two secrets (rotation)', signatureHeader(body, [other, secret]), body, true],
    ['signed with another secret', signatureHeader(body, [other]), body, false],
    ['another body', signatureHeader(body, [secret]), body.replace('high', 'low!'), false],
    ['a timestamp 400 s old', signatureHeader(body, [secret], now - 400), body, false],
  ];
  for (const [what, header, sent, valid] of cases) {
    const ours = signatureProblem(sent, header, secret) === null;
    const theirs = stripeAccepts(sent, header, secret);
    if (ours !== valid || theirs !== valid) throw new Error(`signature check, ${what}: the receiver ${ours ? 'accepts' : 'refuses'}, stripe ${theirs ? 'accepts' : 'refuses'}; expected ${valid ? 'accepted' : 'refused'}`);
  }
  const header = signatureHeader(body, [secret]);
  const time = (check: () => boolean) => {
    for (let i = 0; i < VERIFICATIONS; i += 1) if (!check()) throw new Error('signature check failed while timing');
    const t0 = performance.now();
    for (let i = 0; i < VERIFICATIONS; i += 1) check();
    return ((performance.now() - t0) * 1000) / VERIFICATIONS;
  };
  return {
    stripeMicroseconds: Number(time(() => stripeAccepts(body, header, secret)).toFixed(1)),
    receiverMicroseconds: Number(time(() => signatureProblem(body, header, secret) === null).toFixed(1)),
    bodyBytes: Buffer.byteLength(body),
  };
}

function pipelineLogger(logged: string[]): Logger {
  return pino(
    { level: 'warn', base: { service: 'bench-webhooks' }, timestamp: pino.stdTimeFunctions.isoTime },
    {
      write(line: string) {
        logged.push(line);
        process.stderr.write(line);
      },
    },
  );
}

async function setUp(cleanup: Cleanup, concurrency: number): Promise<Bench & { databaseLabel: string; busLabel: string; queuePrefix: string | null }> {
  const databaseLabel = await ensureDatabase(cleanup);
  const database = await createTestDatabase('bench_webhooks');
  cleanup.add('the benchmark database', () => database.drop());
  const logged: string[] = [];
  const logger = pipelineLogger(logged);
  const orm = await createOrm({ databaseUrl: database.url, schema: 'platform', entities: platformSubgraph.entities, migrations: platformSubgraph.migrations, logger });
  cleanup.add('the ORM', () => orm.close(true));
  await migrate(orm, database.url, 'platform', logger);
  const knex = orm.em.getConnection().getKnex();
  const statements: Statements = {};
  knex.on('query', (query: { sql?: string }) => {
    const kind = classifyStatement(query.sql ?? '');
    statements[kind] = (statements[kind] ?? 0) + 1;
  });

  const db = new pg.Client({ connectionString: database.url });
  await db.connect();
  cleanup.add('the pg client', () => db.end());

  say('making a test CA and a server certificate for localhost (openssl), starting the HTTPS receiver in a worker thread');
  const pki = createTestPki();
  cleanup.add('the test PKI', async () => pki.remove());
  const receiver = await startReceiver(pki);
  cleanup.add('the receiver', () => receiver.close());

  const box = createSecretBox(randomBytes(32));
  const runtime: PlatformRuntime = { config: {} as PlatformConfig, box };
  const subscriptions: Subscription[] = [];
  for (let t = 0; t < TENANTS; t += 1) {
    const identity: Identity = { subject: 'bench', tenantId: tenantId(t), roles: ['admin'], scopes: ['read', 'deploy'] };
    const service = new WebhookSubscriptionService(tenantEntityManager(orm.em, identity), identity, runtime);
    for (let s = 0; s < SUBSCRIPTIONS_PER_TENANT; s += 1) {
      const path = `/hooks/t${t}-s${s}`;
      const { subscription, secret } = await service.create({ url: `${receiver.url}${path}`, description: `bench tenant ${t} subscription ${s}` });
      subscriptions.push({ id: subscription.id, tenantId: tenantId(t), path, secret });
    }
  }
  await receiver.setSecrets(Object.fromEntries(subscriptions.map((s) => [s.path, s.secret])));
  const tenants = Array.from({ length: TENANTS }, (_, t) => tenantId(t));
  const byTenant = new Map(tenants.map((t) => [t, subscriptions.filter((s) => s.tenantId === t)]));
  say(`  ${subscriptions.length} subscriptions over ${TENANTS} tenants (events: *), at ${receiver.url}/hooks/…; every event is ${SUBSCRIPTIONS_PER_TENANT} deliveries`);

  const dispatcher = startDispatcher({ knex, box, logger, allowPrivateNetworks: true, caFile: pki.caFile, concurrency });
  cleanup.add('the dispatcher', () => dispatcher.stop());

  const rabbitUrl = process.env.RABBITMQ_URL?.trim() || undefined;
  const queuePrefix = rabbitUrl ? `bench-webhooks-${randomBytes(6).toString('hex')}.` : null;
  if (rabbitUrl) {
    cleanup.add('the benchmark queues on RabbitMQ', async () => {
      const connection = await amqp.connect(rabbitUrl);
      try {
        const channel = await connection.createChannel();
        for (const queue of Object.values(WEBHOOK_QUEUES)) await channel.deleteQueue(queuePrefix + queue);
        await channel.close();
      } finally {
        await connection.close();
      }
    });
  }
  const bus = createEventBus(rabbitUrl, logger);
  cleanup.add("the consumer's event bus", () => bus.close());
  const publisher = rabbitUrl ? createEventBus(rabbitUrl, logger) : bus;
  if (publisher !== bus) cleanup.add("the publisher's event bus", () => publisher.close());
  await startEventConsumer({ knex, bus, logger, clock: () => new Date(), onDeliveries: () => dispatcher.nudge(), ...(queuePrefix ? { queuePrefix } : {}) });
  const busLabel = rabbitUrl
    ? `RabbitMQ at ${new URL(rabbitUrl).host} (publisher and consumer on connections of their own), queues ${queuePrefix}${WEBHOOK_QUEUES.platform} and …${WEBHOOK_QUEUES.cicd}`
    : 'in-process (RABBITMQ_URL not set)';
  say(`  event bus: ${busLabel}; dispatcher concurrency ${concurrency}`);

  return {
    db,
    publisher,
    dispatcher,
    receiver,
    subscriptions,
    tenants,
    byTenant,
    byPath: new Map(subscriptions.map((s) => [s.path, s])),
    statements,
    logged,
    caPem: readFileSync(pki.caFile, 'utf8'),
    concurrency,
    brokerPids: localBrokerPids(rabbitUrl),
    poolWaiting: () => (knex.client as { pool?: { numPendingAcquires(): number } }).pool?.numPendingAcquires() ?? 0,
    databaseLabel,
    busLabel,
    queuePrefix,
  };
}

/** Before measuring: a forged signature is refused by the receiver, and answered 400. */
async function checkReceiverRefuses(bench: Bench): Promise<void> {
  const sub = bench.subscriptions[0]!;
  const body = JSON.stringify(envelope(`forged_${randomUUID()}`, sub.tenantId, wallClock()));
  const agent = new Agent({ connect: { ca: [...rootCertificates, bench.caPem] } });
  try {
    const response = await request(`${bench.receiver.url}${sub.path}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'service-signature': signatureHeader(body, ['whsec_not-the-secret']), 'service-event-id': 'x', 'service-event-type': EVENT_TYPE },
      body,
    });
    await response.body.text();
    const collected = await bench.receiver.collect();
    if (response.statusCode !== 400 || collected.arrivals.length !== 0 || collected.rejected.length !== 1) {
      throw new Error(`the receiver answered ${response.statusCode} to a forged signature (${collected.arrivals.length} accepted, ${collected.rejected.length} refused)`);
    }
  } finally {
    await agent.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The pipeline target

interface PipelineRun {
  tag: string;
  offeredEventsPerS: number;
  offeredDeliveriesPerS: number;
  /** Events published in the whole run, warm-up included. */
  events: number;
  windowSeconds: number;
  /** The window on process.hrtime's clock (µs), that of `node --cpu-prof` profiles' timestamps. */
  windowMonotonicUs: [number, number];
  /** Deliveries recorded `succeeded` in the database during the window, per second. */
  deliveriesPerS: number;
  /** First attempts that reached the receiver during the window, per second. */
  arrivalsPerS: number;
  /** Event-to-first-attempt, for the events published in the window. */
  latency: Latency;
  /**
   * The same, split at the delivery row's `created_at` (the fan-out's `now`, taken when the bus
   * hands the event over) and its attempt's `attempted_at` (the dispatcher starts the POST).
   */
  stages: { publishToFanOut: Latency; fanOutToSend: Latency; sendToArrival: Latency };
  /** Deliveries of events published by the end of the window that were not recorded yet. */
  backlogAtEnd: number;
  drainMs: number;
  /** Queries waiting for a connection of the ORM's pool of 10 during the window, sampled every 50 ms. */
  poolWaiting: { mean: number; max: number };
  /** How late the publisher's timer published the window's events, behind the steady schedule: the main thread's stalls. */
  publisherLag: Latency;
  statementsPerDelivery: Record<string, number>;
  cpu: CpuShare | null;
  mainThreadUtilization: number;
  receiverUtilization: number;
}

const succeededCount = async (db: pg.Client) => (await db.query<{ n: number }>(`select count(*)::int as n from platform.webhook_delivery where status = 'succeeded'`)).rows[0]!.n;

interface WindowMark {
  at: number;
  /** process.hrtime in µs: the clock of `node --cpu-prof` profiles, to cut them to the windows. */
  monotonicUs: number;
  succeeded: number;
  statements: Statements;
  cpu: CpuSample | null;
  elu: EventLoopUtilization;
}

async function mark(bench: Bench): Promise<WindowMark> {
  // The count is taken when the query is sent (the bench's own connection, nothing queued on it),
  // not when its answer is read: a stall of the main thread would delay only the latter.
  const at = wallClock();
  const succeeded = await succeededCount(bench.db);
  return { at, monotonicUs: Number(process.hrtime.bigint() / 1000n), succeeded, statements: { ...bench.statements }, cpu: await cpuSample(bench.db, bench.brokerPids), elu: performance.eventLoopUtilization() };
}

/** Waits until every event of the run is in the inbox and every delivery of it succeeded; fails when nothing moves for STALL_MS. */
async function drain(bench: Bench, prefix: string, events: number): Promise<void> {
  let last = '';
  let lastChange = Date.now();
  for (;;) {
    const { rows } = await bench.db.query<{ inbox: number; deliveries: number; succeeded: number }>(
      `select (select count(*)::int from platform.event_inbox where starts_with(event_id, $1)) as inbox,
              count(*)::int as deliveries, (count(*) filter (where status = 'succeeded'))::int as succeeded
         from platform.webhook_delivery where starts_with(event_id, $1)`,
      [prefix],
    );
    const { inbox, deliveries, succeeded } = rows[0]!;
    if (inbox === events && deliveries === succeeded) return;
    const now = `${inbox}/${deliveries}/${succeeded}`;
    if (now !== last) {
      last = now;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > STALL_MS) {
      const { rows: errors } = await bench.db.query<{ error: string | null; n: number }>(
        `select a.error, count(*)::int as n from platform.webhook_delivery_attempt a join platform.webhook_delivery d on d.id = a.delivery_id
          where starts_with(d.event_id, $1) and not a.succeeded group by a.error order by n desc limit 5`,
        [prefix],
      );
      throw new Error(`draining ${prefix}*: nothing moved for ${STALL_MS / 1000} s: ${inbox} of ${events} events fanned out, ${succeeded} of ${deliveries} deliveries succeeded; failed attempts: ${JSON.stringify(errors)}`);
    }
    await sleep(100);
  }
}

/** A delivery's times in the database, ms on the wall clock: written by the fan-out (its `now`), first attempt started. */
interface Stamps {
  createdAt: number;
  attemptedAt: number;
}

/**
 * After the drain: every event of the run fanned out to exactly its tenant's subscriptions, each
 * delivery succeeded on its one attempt (answered 200), and the receiver accepted each (event,
 * subscription) once, with the delivery's id and attempt 1, refusing nothing.
 */
async function checkRun(bench: Bench, prefix: string, events: number, arrivals: Arrival[], rejected: Rejection[]): Promise<Map<string, Stamps>> {
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < 8) problems.push(text);
  };
  if (rejected.length > 0) problem(`the receiver refused ${rejected.length} requests, e.g. ${JSON.stringify(rejected.slice(0, 3))}`);

  const expected = new Set<string>();
  for (let i = 0; i < events; i += 1) for (const s of bench.byTenant.get(bench.tenants[i % bench.tenants.length]!)!) expected.add(`${prefix}${i}|${s.id}`);

  const { rows: inbox } = await bench.db.query<{ n: number; deliveries: number }>(
    'select count(*)::int as n, coalesce(sum(deliveries), 0)::int as deliveries from platform.event_inbox where starts_with(event_id, $1)',
    [prefix],
  );
  if (inbox[0]!.n !== events || inbox[0]!.deliveries !== expected.size) problem(`event_inbox holds ${inbox[0]!.n} events with ${inbox[0]!.deliveries} deliveries; expected ${events} with ${expected.size}`);

  const { rows } = await bench.db.query<{ id: string; subscription_id: string; event_id: string; status: string; attempt_count: number; last_status_code: number | null; attempts: number; ok: boolean; created_ms: number; attempted_ms: number | null }>(
    `select d.id, d.subscription_id, d.event_id, d.status, d.attempt_count, d.last_status_code,
            count(a.id)::int as attempts, coalesce(bool_and(a.succeeded), false) as ok,
            extract(epoch from d.created_at)::float8 * 1000 as created_ms, extract(epoch from min(a.attempted_at))::float8 * 1000 as attempted_ms
       from platform.webhook_delivery d left join platform.webhook_delivery_attempt a on a.delivery_id = d.id
      where starts_with(d.event_id, $1) group by d.id`,
    [prefix],
  );
  const deliveryIds = new Map<string, string>();
  const stamps = new Map<string, Stamps>();
  for (const r of rows) {
    const key = `${r.event_id}|${r.subscription_id}`;
    stamps.set(key, { createdAt: r.created_ms, attemptedAt: r.attempted_ms ?? Number.NaN });
    if (!expected.has(key)) problem(`a delivery of ${r.event_id} to subscription ${r.subscription_id}, which is not one of the event's tenant`);
    if (deliveryIds.has(key)) problem(`two deliveries of ${r.event_id} to ${r.subscription_id}`);
    deliveryIds.set(key, r.id);
    if (r.status !== 'succeeded' || r.attempt_count !== 1 || r.last_status_code !== 200 || r.attempts !== 1 || !r.ok) {
      problem(`delivery ${r.id} (${r.event_id}): status ${r.status}, ${r.attempt_count} attempts counted, ${r.attempts} recorded (all succeeded: ${r.ok}), last status ${r.last_status_code}`);
    }
  }
  if (rows.length !== expected.size) problem(`${rows.length} deliveries written; expected ${expected.size}`);

  const seen = new Set<string>();
  for (const a of arrivals) {
    const sub = bench.byPath.get(a.path);
    const key = `${a.eventId}|${sub?.id}`;
    if (!a.eventId.startsWith(prefix)) problem(`the receiver got ${a.eventId} during the run of ${prefix}*`);
    else if (!expected.has(key)) problem(`the receiver got ${a.eventId} at ${a.path}, not a subscription of the event's tenant`);
    if (seen.has(key)) problem(`the receiver got ${a.eventId} at ${a.path} twice (attempt ${a.attempt})`);
    seen.add(key);
    if (a.attempt !== '1') problem(`the receiver got ${a.eventId} at ${a.path} as attempt ${a.attempt}`);
    if (deliveryIds.has(key) && deliveryIds.get(key) !== a.deliveryId) problem(`the receiver got ${a.eventId} at ${a.path} as delivery ${a.deliveryId}; the database says ${deliveryIds.get(key)}`);
  }
  if (seen.size !== expected.size) problem(`the receiver accepted ${seen.size} distinct deliveries (${arrivals.length} requests); expected ${expected.size}`);
  if (problems.length > 0) throw new Error(`pipeline run ${prefix}*: ${problems.join('; ')}`);
  return stamps;
}

/**
 * Publishes `eventsPerS` events a second, open loop (a 10 ms timer publishing what is due, so a
 * late timer catches up), for WARMUP_SECONDS + `seconds`; measures the last `seconds`; drains and
 * checks everything the run wrote and sent.
 */
async function runPipeline(bench: Bench, tag: string, eventsPerS: number, seconds: number): Promise<PipelineRun> {
  const prefix = `evt_${tag}_`;
  const logged = bench.logged.length;
  const arrivals: Arrival[] = [];
  const rejected: Rejection[] = [];
  const keep = (c: Collected) => {
    arrivals.push(...c.arrivals);
    rejected.push(...c.rejected);
    return c;
  };
  keep(await bench.receiver.collect());
  const start = await mark(bench);

  const t0 = wallClock();
  const windowStart = t0 + WARMUP_SECONDS * 1000;
  const windowEnd = windowStart + seconds * 1000;
  const events = Math.round(eventsPerS * (WARMUP_SECONDS + seconds));
  const lags: number[] = [];
  const waiting: number[] = [];
  let next = 0;
  let confirmed = 0;
  let publishError: unknown;
  const tick = () => {
    const due = Math.min(events, Math.floor(((wallClock() - t0) / 1000) * eventsPerS) + 1);
    while (next < due) {
      const i = next;
      next += 1;
      const at = wallClock();
      const scheduled = t0 + (i / eventsPerS) * 1000;
      if (scheduled >= windowStart && scheduled < windowEnd) lags.push(at - scheduled);
      const tenant = bench.tenants[i % bench.tenants.length]!;
      bench.publisher.publish({ exchange: EXCHANGES.platform, routingKey: EVENT_TYPE, messageId: `${prefix}${i}`, body: envelope(`${prefix}${i}`, tenant, at) }).then(
        () => (confirmed += 1),
        (error: unknown) => (publishError ??= error),
      );
    }
  };
  tick();
  const timer = setInterval(tick, 10);
  let windowMarks: [WindowMark, WindowMark, Collected, Collected];
  try {
    await sleep(windowStart - wallClock());
    const a = await mark(bench);
    const atStart = keep(await bench.receiver.collect());
    const sampler = setInterval(() => waiting.push(bench.poolWaiting()), 50);
    await sleep(windowEnd - wallClock());
    clearInterval(sampler);
    const b = await mark(bench);
    const atEnd = keep(await bench.receiver.collect());
    windowMarks = [a, b, atStart, atEnd];
    while (next < events && publishError === undefined) await sleep(5);
  } finally {
    clearInterval(timer);
  }
  const drainStart = wallClock();
  while (confirmed < events && publishError === undefined) await sleep(10);
  if (publishError !== undefined) throw new Error(`publishing ${prefix}*: ${(publishError as Error).message ?? String(publishError)}`);
  await drain(bench, prefix, events);
  const drainMs = wallClock() - drainStart;
  keep(await bench.receiver.collect());
  const stamps = await checkRun(bench, prefix, events, arrivals, rejected);
  if (bench.logged.length > logged) throw new Error(`pipeline run ${prefix}*: the pipeline logged ${bench.logged.length - logged} warnings or errors (above)`);

  const [a, b, , atEnd] = windowMarks;
  const windowSeconds = (b.at - a.at) / 1000;
  const recorded = b.succeeded - a.succeeded;
  const publishedByEnd = Math.min(events, Math.floor(((windowEnd - t0) / 1000) * eventsPerS) + 1);
  const statements = minusStatements(b.statements, a.statements);
  const inWindow = arrivals.filter((x) => x.publishedAt >= windowStart && x.publishedAt < windowEnd);
  const stampOf = (x: Arrival) => stamps.get(`${x.eventId}|${bench.byPath.get(x.path)!.id}`)!;
  return {
    tag,
    offeredEventsPerS: eventsPerS,
    offeredDeliveriesPerS: eventsPerS * SUBSCRIPTIONS_PER_TENANT,
    events,
    windowSeconds: Number(windowSeconds.toFixed(3)),
    windowMonotonicUs: [a.monotonicUs, b.monotonicUs],
    deliveriesPerS: recorded / windowSeconds,
    arrivalsPerS: arrivals.filter((x) => x.arrivedAt >= a.at && x.arrivedAt < b.at).length / windowSeconds,
    latency: latency(inWindow.map((x) => x.arrivedAt - x.publishedAt)),
    stages: {
      publishToFanOut: latency(inWindow.map((x) => stampOf(x).createdAt - x.publishedAt)),
      fanOutToSend: latency(inWindow.map((x) => stampOf(x).attemptedAt - stampOf(x).createdAt)),
      sendToArrival: latency(inWindow.map((x) => x.arrivedAt - stampOf(x).attemptedAt)),
    },
    backlogAtEnd: publishedByEnd * SUBSCRIPTIONS_PER_TENANT - (b.succeeded - start.succeeded),
    drainMs: Math.round(drainMs),
    publisherLag: latency(lags),
    poolWaiting: { mean: Number((waiting.reduce((x, y) => x + y, 0) / Math.max(1, waiting.length)).toFixed(1)), max: Math.max(0, ...waiting) },
    statementsPerDelivery: Object.fromEntries(Object.entries(statements).map(([k, v]) => [k, Number((v / Math.max(1, recorded)).toFixed(3))])),
    cpu: cpuShare(a.cpu, b.cpu),
    mainThreadUtilization: Number(performance.eventLoopUtilization(b.elu, a.elu).utilization.toFixed(3)),
    receiverUtilization: Number(atEnd.utilization.toFixed(3)),
  };
}

const stageText = (l: Latency) => `${l.p50Ms}/${l.p99Ms}/${l.maxMs}`;
const pipelineLine = (r: PipelineRun) =>
  `${r.deliveriesPerS.toFixed(0)} deliveries/s recorded of ${r.offeredDeliveriesPerS} offered (receiver ${r.arrivalsPerS.toFixed(0)}/s), event-to-first-attempt p50 ${r.latency.p50Ms} ms p99 ${r.latency.p99Ms} ms max ${r.latency.maxMs} ms ` +
  `[p50/p99/max ms: bus ${stageText(r.stages.publishToFanOut)}, fan-out to send ${stageText(r.stages.fanOutToSend)}, send to arrival ${stageText(r.stages.sendToArrival)}; publisher late ${stageText(r.publisherLag)}], ` +
  `backlog at end ${r.backlogAtEnd}, queries waiting for the pool mean ${r.poolWaiting.mean} max ${r.poolWaiting.max}, drained in ${r.drainMs} ms; ${cpuText(r.cpu)}; event loops: main ${r.mainThreadUtilization}, receiver ${r.receiverUtilization}`;

// ---------------------------------------------------------------------------------------------
// The receiver's own maximum

interface BaselineRun {
  windowMonotonicUs: [number, number];
  requestsPerS: number;
  requests: number;
  latency: Latency;
  cpu: CpuShare | null;
  mainThreadUtilization: number;
  receiverUtilization: number;
}

/**
 * `bench.concurrency` callers POSTing signed deliveries to the receiver for WARMUP_SECONDS, then
 * `seconds` measured, each answer required to be 200 `ok`; then every request must have been
 * accepted once by the receiver.
 */
async function runBaseline(bench: Bench, tag: string, seconds: number): Promise<BaselineRun> {
  const agent = new Agent({
    connect: { lookup: guardedLookup({ allowPrivate: true }), ca: [...rootCertificates, bench.caPem], timeout: DELIVERY_TIMEOUT_MS },
    connections: 32,
    keepAliveTimeout: 10_000,
  });
  const arrivals: Arrival[] = [];
  const rejected: Rejection[] = [];
  let sent = 0;
  const loop = async (loopSeconds: number): Promise<{ count: number; elapsedS: number; latencies: number[] }> => {
    const latencies: number[] = [];
    const started = performance.now();
    const deadline = started + loopSeconds * 1000;
    const caller = async () => {
      while (performance.now() < deadline) {
        const i = sent;
        sent += 1;
        const sub = bench.subscriptions[i % bench.subscriptions.length]!;
        const id = `base_${tag}_${i}`;
        const body = JSON.stringify(envelope(id, sub.tenantId, wallClock()));
        const t0 = performance.now();
        const response = await request(`${bench.receiver.url}${sub.path}`, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'cloudops-webhooks/1',
            'service-signature': signatureHeader(body, [sub.secret]),
            [DELIVERY_HEADERS.eventId]: id,
            [DELIVERY_HEADERS.eventType]: EVENT_TYPE,
            [DELIVERY_HEADERS.deliveryId]: randomUUID(),
            [DELIVERY_HEADERS.attempt]: '1',
          },
          body,
          signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
          headersTimeout: DELIVERY_TIMEOUT_MS,
          bodyTimeout: DELIVERY_TIMEOUT_MS,
        });
        const text = await response.body.text();
        if (response.statusCode !== 200 || text !== 'ok') throw new Error(`receiver max: ${id} answered ${response.statusCode}: ${text.slice(0, 200)}`);
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: bench.concurrency }, caller));
    return { count: latencies.length, elapsedS: (performance.now() - started) / 1000, latencies };
  };
  try {
    const first = await bench.receiver.collect();
    arrivals.push(...first.arrivals);
    rejected.push(...first.rejected);
    await loop(WARMUP_SECONDS);
    const warm = await bench.receiver.collect();
    arrivals.push(...warm.arrivals);
    rejected.push(...warm.rejected);
    const a = await mark(bench);
    const measured = await loop(seconds);
    const b = await mark(bench);
    const end = await bench.receiver.collect();
    arrivals.push(...end.arrivals);
    rejected.push(...end.rejected);
    const distinct = new Set(arrivals.map((x) => `${x.eventId}|${x.path}`));
    if (rejected.length > 0 || arrivals.length !== sent || distinct.size !== sent || arrivals.some((x) => !x.eventId.startsWith(`base_${tag}_`))) {
      throw new Error(`receiver max ${tag}: ${sent} sent, ${arrivals.length} accepted (${distinct.size} distinct), ${rejected.length} refused ${JSON.stringify(rejected.slice(0, 3))}`);
    }
    return {
      windowMonotonicUs: [a.monotonicUs, b.monotonicUs],
      requestsPerS: measured.count / measured.elapsedS,
      requests: measured.count,
      latency: latency(measured.latencies),
      cpu: cpuShare(a.cpu, b.cpu),
      mainThreadUtilization: Number(performance.eventLoopUtilization(b.elu, a.elu).utilization.toFixed(3)),
      receiverUtilization: Number(end.utilization.toFixed(3)),
    };
  } finally {
    await agent.close();
  }
}

const baselineLine = (r: BaselineRun) =>
  `${r.requestsPerS.toFixed(0)} signed requests/s accepted, p50 ${r.latency.p50Ms} ms p99 ${r.latency.p99Ms} ms; ${cpuText(r.cpu)}; event loops: main ${r.mainThreadUtilization}, receiver ${r.receiverUtilization}`;

// ---------------------------------------------------------------------------------------------

export function run(): Promise<void> {
  return runBenchmark('the pipeline, the receiver and the database', measure);
}

async function measure(seconds: number, cleanup: Cleanup): Promise<void> {
  const concurrency = integerFromEnv('WEBHOOK_CONCURRENCY', 64, 1, 1024);
  const eventsPerS = integerFromEnv('BENCH_EVENTS_PER_S', 600, 1, 5000);
  const offered = eventsPerS * SUBSCRIPTIONS_PER_TENANT;
  say(
    `webhooks benchmark: ramp, then ${ROUNDS} rounds x 2 targets x (${WARMUP_SECONDS} s warm-up + ${seconds} s); offered ${eventsPerS} events/s = ${offered} deliveries/s; ${machine().cpus} CPUs, node ${process.version}`,
  );

  // Before anything else runs, so that nothing competes for the CPU.
  const verifier = checkVerifier();
  say(
    `signature check: the receiver's (HMAC-SHA256, constant-time) agrees with stripe's on 5 cases; per ${verifier.bodyBytes} B delivery: receiver ${verifier.receiverMicroseconds} µs, stripe.webhooks.constructEvent ${verifier.stripeMicroseconds} µs (mean of ${VERIFICATIONS})`,
  );

  const bench = await setUp(cleanup, concurrency);
  await checkReceiverRefuses(bench);
  say('  the receiver refuses a forged signature (400)');

  // The ramp: open loop at rising rates until the pipeline stops keeping up. It warms everything up, too.
  say(`ramp: ${RAMP_STEP_SECONDS} s measured per step after ${WARMUP_SECONDS} s; a step is kept up with when it records >= ${KEEPS_UP * 100}% of what is offered with p99 <= ${TARGET_P99_MS} ms`);
  const ramp: PipelineRun[] = [];
  for (const [step, fraction] of RAMP_FRACTIONS.entries()) {
    const rate = Math.max(1, Math.round(eventsPerS * fraction));
    const r = await runPipeline(bench, `ramp${step + 1}`, rate, RAMP_STEP_SECONDS);
    ramp.push(r);
    const keptUp = r.deliveriesPerS >= KEEPS_UP * r.offeredDeliveriesPerS && r.latency.p99Ms <= TARGET_P99_MS;
    say(`  ${String(rate).padStart(5)} events/s: ${pipelineLine(r)}${keptUp ? '' : '  <- not kept up with'}`);
  }
  const sustained = ramp.filter((r) => r.deliveriesPerS >= KEEPS_UP * r.offeredDeliveriesPerS && r.latency.p99Ms <= TARGET_P99_MS).at(-1);

  const pipelineRuns: PipelineRun[] = [];
  const baselineRuns: BaselineRun[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const order = round % 2 === 1 ? (['pipeline', 'receiver max'] as const) : (['receiver max', 'pipeline'] as const);
    for (const target of order) {
      say(`round ${round}/${ROUNDS} ${target.padEnd(12)} ${WARMUP_SECONDS} s warm-up + ${seconds} s`);
      if (target === 'pipeline') {
        const r = await runPipeline(bench, `round${round}`, eventsPerS, seconds);
        pipelineRuns.push(r);
        say(`  ${pipelineLine(r)}`);
      } else {
        const r = await runBaseline(bench, `round${round}`, seconds);
        baselineRuns.push(r);
        say(`  ${baselineLine(r)}`);
      }
    }
  }

  const deliveries = median(pipelineRuns.map((r) => r.deliveriesPerS));
  const p99 = median(pipelineRuns.map((r) => r.latency.p99Ms));
  const receiverMax = median(baselineRuns.map((r) => r.requestsPerS));
  const ratio = deliveries / receiverMax;
  const byRound = pipelineRuns.map((r, i) => r.deliveriesPerS / baselineRuns[i]!.requestsPerS);
  const throughputPass = deliveries >= TARGET_DELIVERIES_PER_S;
  const latencyPass = p99 <= TARGET_P99_MS;
  const statementKinds = [...new Set(pipelineRuns.flatMap((r) => Object.keys(r.statementsPerDelivery)))].sort();
  const statementsMedian = Object.fromEntries(statementKinds.map((k) => [k, Number(median(pipelineRuns.map((r) => r.statementsPerDelivery[k] ?? 0)).toFixed(3))]));

  const isDisturbed = (c: CpuShare | null) => c !== null && c.other > DISTURBED_CORES;
  const disturbed = [
    ...pipelineRuns.flatMap((r, i) => (isDisturbed(r.cpu) ? [`pipeline round ${i + 1}`] : [])),
    ...baselineRuns.flatMap((r, i) => (isDisturbed(r.cpu) ? [`receiver max round ${i + 1}`] : [])),
  ];
  const rows = [
    ['target', 'median per s', 'median p99 ms', 'per s by round', 'p99 ms by round'],
    ['pipeline (deliveries recorded)', deliveries.toFixed(1), String(p99), pipelineRuns.map((r) => r.deliveriesPerS.toFixed(0)).join(' / '), pipelineRuns.map((r) => String(r.latency.p99Ms)).join(' / ')],
    ['receiver max (signed requests)', receiverMax.toFixed(1), String(median(baselineRuns.map((r) => r.latency.p99Ms))), baselineRuns.map((r) => r.requestsPerS.toFixed(0)).join(' / '), baselineRuns.map((r) => String(r.latency.p99Ms)).join(' / ')],
  ];
  const notes = [
    `offered: ${eventsPerS} events/s x ${SUBSCRIPTIONS_PER_TENANT} subscriptions = ${offered} deliveries/s; bus ${bench.busLabel}; dispatcher concurrency ${concurrency}`,
    `pipeline p99 is event-to-first-attempt (publish -> arrival at the receiver); receiver max p99 is the request's round trip`,
    `pipeline / receiver max: ${ratio.toFixed(2)}x   (by round: ${byRound.map((r) => r.toFixed(2)).join(' / ')})`,
    `target: >= ${TARGET_DELIVERIES_PER_S} signed deliveries/s sustained: ${throughputPass ? 'PASS' : 'FAIL'} (median ${deliveries.toFixed(0)}/s of ${offered}/s offered)`,
    `target: event-to-first-attempt p99 <= ${TARGET_P99_MS} ms: ${latencyPass ? 'PASS' : 'FAIL'} (median p99 ${p99} ms)`,
    `ramp: highest offered rate kept up with: ${sustained ? `${sustained.offeredEventsPerS} events/s = ${sustained.offeredDeliveriesPerS} deliveries/s (recorded ${sustained.deliveriesPerS.toFixed(0)}/s, p99 ${sustained.latency.p99Ms} ms)` : 'none'}; by step: ${ramp.map((r) => `${r.offeredDeliveriesPerS}->${r.deliveriesPerS.toFixed(0)}`).join(', ')}`,
    `SQL statements per delivery (median of rounds): ${Object.entries(statementsMedian).map(([k, v]) => `${k} ${v}`).join(', ')}`,
    `cpu, pipeline rounds: ${pipelineRuns.map((r) => cpuText(r.cpu)).join(' | ')}`,
    `cpu, receiver max rounds: ${baselineRuns.map((r) => cpuText(r.cpu)).join(' | ')}`,
    `signature check per delivery: receiver ${verifier.receiverMicroseconds} µs, stripe ${verifier.stripeMicroseconds} µs`,
    ...(disturbed.length > 0
      ? [`DISTURBED: other processes used > ${DISTURBED_CORES} core during ${disturbed.join(', ')}; on 2 cores that moves these numbers a lot: rerun on an idle machine`]
      : []),
  ];
  process.stdout.write(['', ...formatTable(rows, [0, 3, 4]), '', ...notes, ''].join('\n'));

  writeResults('webhooks', {
    benchmark: 'webhooks',
    date: new Date().toISOString(),
    machine: machine(),
    settings: {
      seconds,
      warmupSeconds: WARMUP_SECONDS,
      rounds: ROUNDS,
      offeredEventsPerS: eventsPerS,
      offeredDeliveriesPerS: offered,
      tenants: TENANTS,
      subscriptionsPerTenant: SUBSCRIPTIONS_PER_TENANT,
      concurrency,
      bus: bench.busLabel,
      queuePrefix: bench.queuePrefix,
      database: bench.databaseLabel,
      receiver: 'node:https in a worker thread; HMAC-SHA256 constant-time verification of every request (bench/webhooks-signature.ts)',
    },
    targets: {
      pipeline: { medianDeliveriesPerS: deliveries, medianP99Ms: p99, rounds: pipelineRuns },
      receiverMax: { medianRequestsPerS: receiverMax, medianP99Ms: median(baselineRuns.map((r) => r.latency.p99Ms)), rounds: baselineRuns },
    },
    ratios: { pipelineToReceiverMax: ratio, byRound },
    goals: {
      throughput: { rule: `>= ${TARGET_DELIVERIES_PER_S} deliveries/s`, pass: throughputPass },
      latency: { rule: `event-to-first-attempt p99 <= ${TARGET_P99_MS} ms`, pass: latencyPass },
    },
    ramp: { keepsUp: `>= ${KEEPS_UP} of offered and p99 <= ${TARGET_P99_MS} ms`, highestKeptUp: sustained?.offeredEventsPerS ?? null, steps: ramp },
    statementsPerDelivery: statementsMedian,
    signatureCheck: verifier,
    disturbed,
  });
}
