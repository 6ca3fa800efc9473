/**
 * `npm run bench -- auth`: what authentication costs at the edge, and how fast passwords hash.
 *
 * Three targets answer the same page (GET {base}/platform/api/v1/support/tickets?limit=20, the
 * 20 newest of 25 tickets of one tenant), with the same Authorization header where it matters:
 *   authenticated  the normal edge with a session access JWT: HS256 verification (jose), the
 *                  revocation deny-list, the request budget, the internal token (cached);
 *   pre-verified   a second edge on the same subgraphs whose authenticator hands out that same
 *                  identity without looking at the request; the internal token comes from a real
 *                  authenticator, so signing and caching it cost the same on both edges;
 *   pat            the normal edge with a personal access token: resolved by auth once, then
 *                  served from the edge's credential cache (CREDENTIAL_CACHE_SECS, 30 s).
 * Then argon2id with the project's own hashPassword: hashes per second one at a time and 2 and 4
 * in parallel (libuv threadpool), and what one login's verify costs.
 * Numbers are reported, not asserted: a missed target still exits 0; errors exit 1.
 */
import type { FastifyRequest } from 'fastify';
import { cpus } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { createAuthenticator, type Authenticator } from '../gateway/identity.js';
import { signAccessToken, verifyAccessToken, type AccessTokenKeys, type Identity } from '../kernel/identity.js';
import { createLogger } from '../kernel/logger.js';
import { hashPassword, verifyPassword } from '../subgraphs/auth/password/password.js';
import { startStack, type Stack } from '../tests/helpers/stack.js';
import {
  asObject,
  ensureDatabase,
  formatTable,
  load,
  machine,
  measureRounds,
  median,
  printSummary,
  runBenchmark,
  say,
  seedTickets,
  useTestEnvironment,
  writeResults,
  type Cleanup,
  type LoadTarget,
} from './harness.js';

const SEEDED = 25;
const LIMIT = 20;
const ROUNDS = 3;
const CONNECTIONS = 10;
const WARMUP_SECONDS = 2;
/** Checking a session JWT may cost the edge at most this share of its throughput. */
const TARGET_RATIO = 0.9;
/** The per-token budget, raised so that it counts but never answers 429 (see tickets.ts). */
const EDGE_ENV = { RATE_LIMIT_PER_MINUTE: '10000000' };
/** The edge's default, stated here because the README explains the pat target with it. */
const CREDENTIAL_CACHE_SECS = 30;

const HASHES = 20;
const HASH_REPETITIONS = 3;
const HASH_PARALLELISM = [1, 2, 4] as const;
const VERIFIES = 10;
/** In-process authenticate() calls timed per credential and mode, after as many thrown-away ones. */
const AUTHENTICATE_CALLS = 5000;

const ACCOUNT = { email: 'bench-auth@example.com', username: 'bench_auth', password: 'Correct horse battery staple 42', tenant_name: 'Bench auth' };

type TargetName = 'authenticated' | 'pre-verified' | 'pat';

interface HashingResult {
  parallel: number;
  hashes: number;
  medianHashesPerSecond: number;
  repetitions: number[];
}

// ---------------------------------------------------------------------------------------------
// Password hashing

/** `count` hashes with `parallel` in flight at any time; answers hashes per second (wall clock). */
async function hashRate(parallel: number, count: number): Promise<number> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      await hashPassword(ACCOUNT.password);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: parallel }, lane));
  return count / ((performance.now() - t0) / 1000);
}

/**
 * Runs before the stack starts: argon2 is CPU-bound, and subgraphs, PostgreSQL or autocannon
 * busy next to it would take CPU from it and make the numbers about the machine's load instead.
 */
async function measureHashing(): Promise<{ results: HashingResult[]; verifyMs: number; verifyRuns: number[] }> {
  say(`password hashing: ${HASHES} hashes x ${HASH_REPETITIONS} repetitions for each of ${HASH_PARALLELISM.join(', ')} in parallel; UV_THREADPOOL_SIZE=${threadpoolSize()}`);
  // The first hash starts libuv's threadpool and makes the first large allocations: thrown away.
  const stored = await hashPassword(ACCOUNT.password);
  const runs = new Map<number, number[]>(HASH_PARALLELISM.map((p) => [p, []]));
  for (let r = 1; r <= HASH_REPETITIONS; r += 1) {
    // Each repetition runs every degree of parallelism, in an order rotated from one repetition
    // to the next, so that a busy moment on the machine does not land on one of them only.
    const order = HASH_PARALLELISM.map((_, i) => HASH_PARALLELISM[(i + r - 1) % HASH_PARALLELISM.length]!);
    for (const parallel of order) {
      const rate = await hashRate(parallel, HASHES);
      runs.get(parallel)!.push(rate);
      say(`  repetition ${r}/${HASH_REPETITIONS}, ${parallel} in parallel: ${rate.toFixed(1)} hashes/s`);
    }
  }
  const results = HASH_PARALLELISM.map((parallel) => ({ parallel, hashes: HASHES, medianHashesPerSecond: median(runs.get(parallel)!), repetitions: runs.get(parallel)! }));
  const verifyRuns: number[] = [];
  for (let i = 0; i < VERIFIES; i += 1) {
    const t0 = performance.now();
    const ok = await verifyPassword(stored, ACCOUNT.password);
    verifyRuns.push(performance.now() - t0);
    if (!ok) throw new Error('verifyPassword refused the password its hash was made from');
  }
  say(`  one verify (a login): ${median(verifyRuns).toFixed(1)} ms, median of ${VERIFIES}`);
  return { results, verifyMs: median(verifyRuns), verifyRuns };
}

/** libuv reads UV_THREADPOOL_SIZE when the pool first starts; unset, the pool has 4 threads. */
function threadpoolSize(): string {
  return process.env.UV_THREADPOOL_SIZE ?? 'unset (libuv default: 4)';
}

// ---------------------------------------------------------------------------------------------
// The edge

/** An authenticator as createEdge builds it, on the stack's secrets and auth service. */
function realAuthenticator(stack: Stack, keys: AccessTokenKeys): Authenticator {
  return createAuthenticator({
    accessKeys: keys,
    internalJwtSecret: stack.internalSecret,
    authBaseUrl: stack.subgraphUrls.auth.replace(/\/graphql$/, ''),
    revocationPollMs: 1000,
    credentialCacheSecs: CREDENTIAL_CACHE_SECS,
    accessTokenTtlSecs: 900,
    logger: createLogger({ service: 'bench', level: 'warn' }),
  });
}

/**
 * Hands out `identity` for every request without reading it: the edge minus credential checks.
 * Internal tokens come from a real authenticator (never started: it needs no revocation feed for
 * that), so signing and reusing them is the same work as on the normal edge.
 */
function preVerifiedAuthenticator(identity: Identity, real: Authenticator): Authenticator {
  return {
    // A fresh object per request, as verification builds one; the arrays too, in case a handler
    // ever changes them.
    authenticate: async () => ({ ...identity, roles: [...identity.roles], scopes: [...identity.scopes] }),
    internalTokenFor: (id) => real.internalTokenFor(id),
    revokeSession: () => undefined,
    start: async () => undefined,
    stop: () => undefined,
  };
}

/** POSTs JSON to the edge; answers the parsed body, or throws unless the status is `expected`. */
async function postJson(url: string, body: unknown, expected: number, token?: string): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`POST ${url} answered ${response.status} (expected ${expected}): ${text.slice(0, 500)}`);
  return asObject(JSON.parse(text), `answer of POST ${url}`);
}

/** A user of its own tenant, signed in, with a read-only personal access token, all through REST. */
async function createAccount(stack: Stack): Promise<{ userId: string; tenantId: string; accessToken: string; pat: string }> {
  const registered = await postJson(`${stack.base}/auth/api/v1/auth/register`, ACCOUNT, 201);
  const user = asObject(registered.user, 'register: user');
  const tenant = asObject(registered.tenant, 'register: tenant');
  const login = await postJson(`${stack.base}/auth/api/v1/auth/login`, { identifier: ACCOUNT.email, password: ACCOUNT.password }, 200);
  const created = await postJson(`${stack.base}/auth/api/v1/tokens`, { name: 'bench', scopes: ['read'] }, 201, String(login.access_token));
  const strings = { userId: user.id, tenantId: tenant.id, accessToken: login.access_token, pat: created.value };
  for (const [key, value] of Object.entries(strings)) if (typeof value !== 'string' || value === '') throw new Error(`creating the account: no ${key} in the answers`);
  return strings as { userId: string; tenantId: string; accessToken: string; pat: string };
}

/** A status and body from one GET, for the checks before measuring. */
async function get(url: string, token: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

/** One request per target before measuring: each must answer 200 with the same 20 of 25 tickets. */
async function verify(targets: LoadTarget[]): Promise<string> {
  let reference: { name: string; text: string } | undefined;
  for (const target of targets) {
    const response = await fetch(target.url, { headers: await target.headers() });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${target.name}: GET ${target.url} answered ${response.status}: ${text.slice(0, 500)}`);
    const page = asObject(JSON.parse(text), `${target.name}: answer`);
    if (!Array.isArray(page.data) || page.data.length !== LIMIT || page.total !== SEEDED || typeof page.next_cursor !== 'string') {
      throw new Error(`${target.name}: expected ${LIMIT} of ${SEEDED} tickets and a next cursor: ${text.slice(0, 500)}`);
    }
    // All three read the same tenant, so anything but the same bytes means one of them is wrong.
    if (reference && text !== reference.text) throw new Error(`${target.name} answers another body than ${reference.name}`);
    reference ??= { name: target.name, text };
    say(`  ${target.name.padEnd(13)} ok: ${page.data.length} of ${page.total} tickets, ${(Buffer.byteLength(text) / 1024).toFixed(1)} KiB`);
  }
  say('  all three bodies are byte-identical');
  return reference!.text;
}

/**
 * Microseconds per authenticate() call in this process, without HTTP or the rest of the request:
 * one call at a time (the latency one request sees) and `CONNECTIONS` in flight (wall time per
 * call, closer to the CPU it takes, since jose's HMAC runs as WebCrypto jobs on the libuv
 * threadpool and calls overlap). The first PAT call resolves it over HTTP and fills the cache;
 * it is among the thrown-away warm-up calls.
 */
async function authenticateCost(authenticator: Authenticator, token: string): Promise<{ oneAtATimeUs: number; inFlightUs: number }> {
  const request = { headers: { authorization: `Bearer ${token}` } } as unknown as FastifyRequest;
  const lanes = async (count: number) => {
    const perLane = Math.ceil(AUTHENTICATE_CALLS / count);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: count }, async () => {
        for (let i = 0; i < perLane; i += 1) await authenticator.authenticate(request);
      }),
    );
    return ((performance.now() - t0) * 1000) / (perLane * count);
  };
  await lanes(1);
  return { oneAtATimeUs: await lanes(1), inFlightUs: await lanes(CONNECTIONS) };
}

export function run(): Promise<void> {
  return runBenchmark('the stack and PostgreSQL', measure);
}

async function measure(seconds: number, cleanup: Cleanup): Promise<void> {
  say(`auth benchmark: password hashing, then ${ROUNDS} rounds x 3 targets x (${WARMUP_SECONDS} s warm-up + ${seconds} s), ${CONNECTIONS} connections; ${cpus().length} CPUs, node ${process.version}`);
  const hashing = await measureHashing();

  const databaseLabel = await ensureDatabase(cleanup);
  useTestEnvironment();
  say('starting the stack: auth, cicd and platform subgraphs (child processes), edge (this process)');
  const stack = await startStack('bench_auth', EDGE_ENV);
  cleanup.add('the stack', () => stack.stop());
  say(`  edge at ${stack.base}`);

  say(`registering ${ACCOUNT.email}, signing in and creating a read-only personal access token, through the REST facade`);
  const account = await createAccount(stack);
  say(`seeding ${SEEDED} tickets for tenant ${account.tenantId} with the account's session token`);
  await seedTickets(stack, account.accessToken, SEEDED, 'bench/auth.ts');

  // The session-style identity of (a) and (b): the account's own tenant, so that all three
  // targets read the same tickets and answer the same bytes. The token is signed with the
  // stack's access secret, as auth would sign it.
  const keys: AccessTokenKeys = { current: stack.accessSecret, previous: [] };
  const identity: Identity = { subject: account.userId, tenantId: account.tenantId, roles: ['admin'], scopes: ['read', 'deploy'], sessionId: 'bench-session' };
  const sessionToken = () => signAccessToken(identity, keys);
  const seen = await verifyAccessToken(await sessionToken(), keys);
  // Otherwise the two edges would not do the same work after authentication (budget key,
  // internal-token cache key, the subgraph's view of the caller).
  if (!isDeepStrictEqual(seen, identity)) throw new Error(`the session token verifies to ${JSON.stringify(seen)}, not ${JSON.stringify(identity)}`);

  say('starting the pre-verified edge on the same subgraphs');
  const preVerified = await stack.startEdge(EDGE_ENV, { authenticator: preVerifiedAuthenticator(identity, realAuthenticator(stack, keys)) });
  say(`  pre-verified edge at ${preVerified.base}`);

  const path = `/platform/api/v1/support/tickets?limit=${LIMIT}`;
  // Both edges get the same header, so that the requests differ only in what the edge does with it.
  const targets: LoadTarget[] = [
    { name: 'authenticated', url: `${stack.base}${path}`, method: 'GET', headers: async () => ({ authorization: `Bearer ${await sessionToken()}` }) },
    { name: 'pre-verified', url: `${preVerified.base}${path}`, method: 'GET', headers: async () => ({ authorization: `Bearer ${await sessionToken()}` }) },
    { name: 'pat', url: `${stack.base}${path}`, method: 'GET', headers: async () => ({ authorization: `Bearer ${account.pat}` }) },
  ];

  say(`checking that every target answers the same ${LIMIT} tickets`);
  const body = await verify(targets);
  // That the second edge really skips verification, and the first really does it.
  const forged = `${(await sessionToken()).slice(0, -4)}AAAA`;
  const refused = await get(targets[0]!.url, forged);
  const waved = await get(targets[1]!.url, forged);
  if (refused.status !== 401) throw new Error(`authenticated: a token with a bad signature answered ${refused.status}, not 401: ${refused.text.slice(0, 300)}`);
  if (waved.status !== 200 || waved.text !== body) throw new Error(`pre-verified: a token with a bad signature answered ${waved.status}, not the page: ${waved.text.slice(0, 300)}`);
  say('  a token with a bad signature: 401 from authenticated, the page from pre-verified');

  say(`authenticate() in this process, ${AUTHENTICATE_CALLS} calls per credential`);
  const probe = realAuthenticator(stack, keys);
  const microUs = { session: await authenticateCost(probe, await sessionToken()), patCached: await authenticateCost(probe, account.pat) };
  const micro = `µs per call, 1 / ${CONNECTIONS} in flight: session JWT ${microUs.session.oneAtATimeUs.toFixed(1)} / ${microUs.session.inFlightUs.toFixed(1)}, PAT from the cache ${microUs.patCached.oneAtATimeUs.toFixed(1)} / ${microUs.patCached.inFlightUs.toFixed(1)}`;
  say(`  ${micro}`);

  const measured = targets.map((t) => ({ ...t, connections: CONNECTIONS, expectBody: body }));
  // Right after start-up the stack is cold (JIT, the gateway's and subgraphs' caches, PostgreSQL's
  // buffers), and a run's own 2 s warm-up does not cover it: that cost would land on whichever
  // target runs first in round 1, authenticated, the very one the target ratio is about.
  say(`warming every target up once (${WARMUP_SECONDS} s each) before the rounds`);
  for (const target of measured) await load(target, WARMUP_SECONDS, target);
  const summary = await measureRounds(measured, seconds, ROUNDS, WARMUP_SECONDS);
  const of = (name: TargetName) => summary.find((s) => s.name === name)!;
  const authenticatedToPreVerified = of('authenticated').medianRps / of('pre-verified').medianRps;
  const patToPreVerified = of('pat').medianRps / of('pre-verified').medianRps;
  const pass = authenticatedToPreVerified >= TARGET_RATIO;
  // The same ratios round by round: targets of one round ran within seconds of each other, so
  // these pair measurements taken in the same state of the machine, which drifts over a run.
  const byRound = (name: TargetName) => of(name).runs.map((r, i) => r.rps / of('pre-verified').runs[i]!.rps);
  const roundRatios = { authenticatedToPreVerified: byRound('authenticated'), patToPreVerified: byRound('pat') };
  const perRound = (ratios: number[]) => `(by round: ${ratios.map((r) => r.toFixed(2)).join(' / ')})`;

  const sequential = hashing.results[0]!.medianHashesPerSecond;
  const hashingTable = formatTable(
    [
      ['in parallel', 'hashes/s', 'vs 1 at a time', 'hashes/s by repetition'],
      ...hashing.results.map((h) => [String(h.parallel), h.medianHashesPerSecond.toFixed(1), `${(h.medianHashesPerSecond / sequential).toFixed(2)}x`, h.repetitions.map((r) => r.toFixed(1)).join(' / ')]),
    ],
    [0, 3],
  );
  printSummary(summary, [
    `authenticated / pre-verified:  ${authenticatedToPreVerified.toFixed(2)}x   ${perRound(roundRatios.authenticatedToPreVerified)}`,
    `pat / pre-verified:            ${patToPreVerified.toFixed(2)}x   ${perRound(roundRatios.patToPreVerified)}`,
    `target: authenticated >= ${TARGET_RATIO}x pre-verified: ${pass ? 'PASS' : 'FAIL'}`,
    `authenticate() in this process, ${micro}`,
    '',
    `password hashing: hashPassword (argon2id, 19 MiB, t=2, p=1), ${HASHES} hashes per repetition, median of ${HASH_REPETITIONS}`,
    `UV_THREADPOOL_SIZE: ${threadpoolSize()}; ${cpus().length} CPUs`,
    ...hashingTable,
    `login (one argon2 verify): ${hashing.verifyMs.toFixed(1)} ms (median of ${VERIFIES})`,
  ]);

  writeResults('auth', {
    benchmark: 'auth',
    date: new Date().toISOString(),
    machine: machine(),
    settings: {
      seconds,
      warmupSeconds: WARMUP_SECONDS,
      warmupPassBeforeRounds: true,
      rounds: ROUNDS,
      connections: CONNECTIONS,
      seededTickets: SEEDED,
      limit: LIMIT,
      credentialCacheSecs: CREDENTIAL_CACHE_SECS,
      nodeEnv: process.env.NODE_ENV ?? null,
      database: databaseLabel,
      uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? null,
    },
    targets: Object.fromEntries(
      summary.map((s) => [
        s.name,
        { url: targets.find((t) => t.name === s.name)!.url, responseBytes: Buffer.byteLength(body), medianRps: s.medianRps, medianP99Ms: s.medianP99Ms, rounds: s.runs },
      ]),
    ),
    ratios: { authenticatedToPreVerified, patToPreVerified, byRound: roundRatios },
    target: { rule: `authenticated >= ${TARGET_RATIO}x pre-verified`, pass },
    authenticateInProcessUs: microUs,
    passwordHashing: {
      function: 'hashPassword (subgraphs/auth/password/password.ts): argon2id, 19 MiB, t=2, p=1',
      results: hashing.results,
      loginVerifyMs: hashing.verifyMs,
      loginVerifyRunsMs: hashing.verifyRuns,
    },
  });
}
