import { createGateway, type Gateway } from '../../gateway/createGateway.js';
import { createLogger } from '../../kernel/logger.js';
import { readSupergraph } from '../../rest-facade/createEdge.js';

// Validation happens before any subgraph is called, so these need no running subgraphs.
const logger = createLogger({ service: 'test', level: 'silent' });
const unreachable = { auth: 'http://127.0.0.1:9/graphql', cicd: 'http://127.0.0.1:9/graphql', platform: 'http://127.0.0.1:9/graphql' };

async function run(gateway: Gateway, query: string) {
  const response = await gateway.server.executeOperation({ query }, { contextValue: { identity: null, requestId: 'test' } });
  if (response.body.kind !== 'single') throw new Error('unexpected incremental response');
  return { status: response.http.status, ...response.body.singleResult };
}

describe('GraphQL limits at the edge', () => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await createGateway({
      supergraphSdl: readSupergraph(),
      subgraphUrls: unreachable,
      introspection: false,
      limits: { maxDepth: 2, maxAliases: 1, maxCost: 20 },
      timeoutMs: 1000,
      logger,
    });
  });
  afterAll(() => gateway.stop());

  it('refuses an operation deeper than GRAPHQL_MAX_DEPTH', async () => {
    const r = await run(gateway, '{ supportTicketMetrics { byStatus { open } } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('query_too_complex');
    expect(r.errors?.[0]?.message).toMatch(/depth limit of 2/i);
  });

  it('refuses more aliases than GRAPHQL_MAX_ALIASES', async () => {
    const r = await run(gateway, '{ a: platformHealth { status } b: platformHealth { status } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('query_too_complex');
  });

  it('refuses an operation costlier than GRAPHQL_MAX_COST', async () => {
    const r = await run(gateway, '{ platformHealth { service status database version } authHealth { service status database version } cicdHealth { service status database version } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('query_too_complex');
  });

  it('refuses introspection when it is turned off', async () => {
    const r = await run(gateway, '{ __schema { queryType { name } } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('validation_failed');
    expect(r.errors?.[0]?.message).toMatch(/introspection/i);
  });

  it('answers upstream_unavailable when a subgraph cannot be reached', async () => {
    const r = await run(gateway, '{ platformHealth { status } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('upstream_unavailable');
  });
});
