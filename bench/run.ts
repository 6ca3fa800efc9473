/**
 * `npm run bench -- <name>`: runs one benchmark from dist/bench/<name>.js.
 *
 * Benchmarks are listed here rather than discovered from the folder, so that helper modules
 * added next to them are never mistaken for a benchmark and the name from the command line
 * never reaches `import()` unchecked.
 */

/** What every benchmark module exports. It throws on errors; a missed target is not an error. */
export interface BenchmarkModule {
  run(): Promise<void>;
}

const BENCHMARKS: Record<string, string> = {
  apps: 'POST /apps (create an app on GitOps) per second and p99 through the edge vs an authenticated GET of an app, then create → reachable on kube-sim with zero delays',
  tickets: 'GET support tickets: REST facade through the edge vs the platform subgraph directly vs plain pg',
  auth: 'what authentication costs at the edge (session JWT, cached PAT, none) and argon2id password hashing throughput',
  'cicd-webhooks': 'signed host_a push webhooks per second through the edge vs an authenticated GET on the same edge',
  'kube-sim': 'get/list/patch per second through @kubernetes/client-node against kube-sim vs a bare server answering the same bytes',
  webhooks: 'outbound webhook events fanned out and delivered, signed, to a local HTTPS receiver (bus, fan-out, dispatcher) vs the receiver\'s own max accept rate',
};

function usage(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((n) => n.length));
  const lines = Object.entries(BENCHMARKS).map(([name, what]) => `  ${name.padEnd(width)}  ${what}`);
  return ['usage: npm run bench -- <name>', '', 'available benchmarks:', ...lines, ''].join('\n');
}

/**
 * After a benchmark returns, everything it started should be stopped; if something still keeps
 * the event loop alive, say what instead of hanging silently, then exit anyway.
 */
function exitWhenIdle(code: number): void {
  process.exitCode = code;
  setTimeout(() => {
    process.stderr.write(`bench: still running 10 s after the benchmark ended; open handles: ${process.getActiveResourcesInfo().join(', ')}\n`);
    process.exit(code || 1);
  }, 10_000).unref();
}

async function main(): Promise<void> {
  const name = process.argv[2];
  if (name === undefined || !Object.hasOwn(BENCHMARKS, name)) {
    if (name !== undefined) process.stderr.write(`unknown benchmark "${name}"\n\n`);
    process.stderr.write(usage());
    process.exit(1);
  }
  const module = (await import(`./${name}.js`)) as Partial<BenchmarkModule>;
  if (typeof module.run !== 'function') throw new Error(`bench/${name}.ts does not export run()`);
  await module.run();
}

main().then(
  () => exitWhenIdle(0),
  (error: unknown) => {
    process.stderr.write(`\nbenchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    exitWhenIdle(1);
  },
);
