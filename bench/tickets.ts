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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import pg from 'pg';
import { signInternalToken, type Identity } from '../kernel/identity.js';
import { encodeCursor } from '../kernel/pagination.js';
import { platformRoutes } from '../rest-facade/routes/platform.js';
import { startStack } from '../tests/helpers/stack.js';
import {
  asObject,
  ensureDatabase,
  machine,
  measureRounds,
  printSummary,
  runBenchmark,
  say,
  seedTickets,
  useTestEnvironment,
  writeResults,
  type Cleanup,
  type LoadTarget,
} from './harness.js';

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

interface Target extends LoadTarget {
  name: TargetName;
  /** The ticket ids, newest first, and the total, from one answer; throws when it has another shape. */
  read(json: unknown): { ids: string[]; total: number; nextCursor: unknown };
}

/** The operation the facade runs for GET /api/v1/support/tickets, so both targets run the same text. */
function listOperation(): { query: string; operationName: string } {
  const route = platformRoutes.find((r) => r.method === 'GET' && r.path === '/api/v1/support/tickets');
  if (!route) throw new Error('rest-facade/routes/platform.ts has no GET /api/v1/support/tickets route');
  const name = /\b(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(route.operation)?.[1];
  if (!name) throw new Error('the GET /api/v1/support/tickets operation has no name');
  return { query: route.operation, operationName: name };
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

export function run(): Promise<void> {
  return runBenchmark('the baseline, the stack and PostgreSQL', measure);
}

async function measure(seconds: number, cleanup: Cleanup): Promise<void> {
  say(`tickets benchmark: ${ROUNDS} rounds x 3 targets x (${WARMUP_SECONDS} s warm-up + ${seconds} s), ${CONNECTIONS} connections, ${cpus().length} CPUs, node ${process.version}`);
  const databaseLabel = await ensureDatabase(cleanup);
  useTestEnvironment();

  say('starting the stack: auth, cicd and platform subgraphs (child processes), edge (this process)');
  // The per-token budget (600 a minute by default) would answer 429 within a second: raise it
  // to the largest allowed value rather than switch it off, so its bookkeeping is still measured.
  const stack = await startStack('bench_tickets', { RATE_LIMIT_PER_MINUTE: '10000000' });
  cleanup.add('the stack', () => stack.stop());
  say(`  edge at ${stack.base}, platform subgraph at ${stack.subgraphUrls.platform}`);

  say(`seeding ${SEEDED} tickets for tenant ${TENANT} through the REST facade`);
  await seedTickets(stack, await stack.token(IDENTITY), SEEDED, 'bench/tickets.ts');

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
      // The subgraph's internal token lives 60 s (INTERNAL_TOKEN_TTL_SECONDS), less than the whole
      // benchmark: headers() signs a new one before every run.
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

  const summary = await measureRounds(
    targets.map((t) => ({ ...t, connections: CONNECTIONS, expectBody: bodies.get(t.name)! })),
    seconds,
    ROUNDS,
    WARMUP_SECONDS,
  );
  const of = (name: TargetName) => summary.find((s) => s.name === name)!;
  const facadeToSubgraph = of('facade').medianRps / of('subgraph').medianRps;
  const facadeToBaseline = of('facade').medianRps / of('pg-baseline').medianRps;
  const pass = facadeToSubgraph >= TARGET_RATIO;

  printSummary(summary, [
    `facade / subgraph:     ${facadeToSubgraph.toFixed(2)}x`,
    `facade / pg-baseline:  ${facadeToBaseline.toFixed(2)}x`,
    `target: facade >= ${TARGET_RATIO}x direct subgraph: ${pass ? 'PASS' : 'FAIL'}`,
  ]);

  writeResults('tickets', {
    benchmark: 'tickets',
    date: new Date().toISOString(),
    machine: machine(),
    settings: { seconds, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, connections: CONNECTIONS, seededTickets: SEEDED, limit: LIMIT, nodeEnv: process.env.NODE_ENV ?? null, database: databaseLabel },
    targets: Object.fromEntries(
      summary.map((s) => [
        s.name,
        {
          url: targets.find((t) => t.name === s.name)!.url,
          responseBytes: Buffer.byteLength(bodies.get(s.name as TargetName)!),
          medianRps: s.medianRps,
          medianP99Ms: s.medianP99Ms,
          rounds: s.runs,
        },
      ]),
    ),
    ratios: { facadeToSubgraph, facadeToBaseline },
    target: { rule: `facade >= ${TARGET_RATIO}x direct subgraph`, pass },
  });
}
