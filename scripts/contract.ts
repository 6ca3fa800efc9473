import { composeServices } from '@apollo/composition';
import { Supergraph } from '@apollo/federation-internals';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'graphql';
import { projectRoot } from '../kernel/paths.js';
import { defaultServicePorts } from '../kernel/config.js';

const run = promisify(execFile);
const SUBGRAPHS = ['auth', 'cicd', 'platform'] as const;
type SubgraphName = (typeof SUBGRAPHS)[number];

/**
 * Prints one subgraph's SDL in a process of its own: type-graphql keeps global metadata, so
 * building the three schemas in one process could mix their types.
 */
async function printSdl(name: SubgraphName): Promise<string> {
  const script = join(projectRoot(), 'dist', 'scripts', 'contract.js');
  const { stdout } = await run(process.execPath, [script, '--print-sdl', name], { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/**
 * Produces every generated contract file from the code: each subgraph's SDL, the composed
 * supergraph and the OpenAPI document of the REST facade. Returns path (from the project root)
 * → content. Needs `npm run build` first (it runs the compiled subgraphs).
 */
export async function generateContract(): Promise<Record<string, string>> {
  const sdls = await Promise.all(SUBGRAPHS.map(async (name) => [name, await printSdl(name)] as const));
  const composition = composeServices(
    sdls.map(([name, sdl]) => ({ name, typeDefs: parse(sdl), url: `http://127.0.0.1:${defaultServicePorts[name]}/graphql` })),
  );
  if (composition.errors) throw new Error(`composition failed:\n${composition.errors.map((e) => `  ${e.message}`).join('\n')}`);
  const supergraphSdl = composition.supergraphSdl;
  const apiSchema = Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
  const { compileRoutes } = await import('../rest-facade/compileRoutes.js');
  const { buildOpenApi } = await import('../rest-facade/openapi.js');
  const { routes } = await import('../rest-facade/routes/index.js');
  const openapi = buildOpenApi(compileRoutes(routes, apiSchema), apiSchema, { basePath: '/api' });
  const files: Record<string, string> = {};
  for (const [name, sdl] of sdls) files[`schema/${name}.graphql`] = sdl;
  files['schema/supergraph.graphql'] = `${supergraphSdl.trim()}\n`;
  files['schema/openapi.json'] = `${JSON.stringify(openapi, null, 2)}\n`;
  const { eventCatalogueDocument } = await import('../kernel/event-catalogue.js');
  files['schema/events.json'] = `${JSON.stringify(eventCatalogueDocument(), null, 2)}\n`;
  return files;
}

/** Files whose checked-in content differs from what the code generates. */
export async function staleContractFiles(): Promise<string[]> {
  const files = await generateContract();
  return Object.entries(files)
    .filter(([path, content]) => {
      try {
        return readFileSync(join(projectRoot(), path), 'utf8') !== content;
      } catch {
        return true;
      }
    })
    .map(([path]) => path);
}

async function cli(): Promise<void> {
  const [flag, name] = process.argv.slice(2);
  if (flag === '--print-sdl') {
    if (!(SUBGRAPHS as readonly string[]).includes(name ?? '')) throw new Error(`unknown subgraph ${name}`);
    const { buildSubgraphSchemaFor } = await import('../kernel/graphql/startSubgraph.js');
    const definitions = {
      auth: async () => (await import('../subgraphs/auth/index.js')).authSubgraph,
      cicd: async () => (await import('../subgraphs/cicd/index.js')).cicdSubgraph,
      platform: async () => (await import('../subgraphs/platform/index.js')).platformSubgraph,
    };
    const { sdl } = await buildSubgraphSchemaFor(await definitions[name as SubgraphName]());
    process.stdout.write(`${sdl.trim()}\n`);
    return;
  }
  if (flag === '--check') {
    const stale = await staleContractFiles();
    if (stale.length > 0) {
      process.stderr.write(`stale contract files (run npm run schema): ${stale.join(', ')}\n`);
      process.exit(1);
    }
    process.stdout.write('contract files are up to date\n');
    return;
  }
  const files = await generateContract();
  for (const [path, content] of Object.entries(files)) {
    writeFileSync(join(projectRoot(), path), content);
    process.stdout.write(`wrote ${path}\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  cli().catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
