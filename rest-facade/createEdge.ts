import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request as undiciRequest } from 'undici';
import type { EdgeConfig } from '../kernel/config.js';
import { AppError, ErrorCodes } from '../kernel/errors.js';
import { createHttpServer, errorEnvelope, registerHealthRoutes } from '../kernel/http.js';
import type { Logger } from '../kernel/logger.js';
import { projectRoot } from '../kernel/paths.js';
import { executeApolloHttp, writeApolloResponse } from '../kernel/graphql/apolloHandler.js';
import { createGateway, type EdgeContext, type Gateway } from '../gateway/createGateway.js';
import { createAuthenticator, type Authenticator } from '../gateway/identity.js';
import { compileRoutes } from './compileRoutes.js';
import { registerDocs } from './docs.js';
import { buildOpenApi } from './openapi.js';
import { registerRestRoutes } from './registerRestRoutes.js';
import { routes, type Prefix } from './routes/index.js';

export interface Edge {
  app: FastifyInstance;
  gateway: Gateway;
  /** http://host:port of the listening edge. */
  address: string;
  stop(): Promise<void>;
}

export function readSupergraph(): string {
  return readFileSync(join(projectRoot(), 'schema', 'supergraph.graphql'), 'utf8');
}

function registerGraphqlEndpoint(app: FastifyInstance, path: string, gateway: Gateway, authenticator: Authenticator, sendGraphiql: (reply: FastifyReply) => FastifyReply) {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const wantsPage = request.method === 'GET' && !(request.query as Record<string, unknown>).query && (request.headers.accept ?? '').includes('text/html');
    if (wantsPage) return sendGraphiql(reply);
    let context: EdgeContext;
    try {
      const identity = await authenticator.authenticate(request);
      context = { identity, requestId: request.id, ...(identity ? { internalToken: await authenticator.internalTokenFor(identity) } : {}) };
    } catch (error) {
      const definition = error instanceof AppError ? error.definition : ErrorCodes.unauthenticated;
      const message = (error as Error).message;
      return reply
        .status(definition.status)
        .send({ errors: [{ message, extensions: { code: definition.code } }], ...errorEnvelope(definition.code, message, request.id) });
    }
    const result = await executeApolloHttp(gateway.server, request, context);
    if (result.status >= 400) {
      // GraphQL clients read `errors`; everything else reads the platform's envelope. Give both.
      try {
        const body = JSON.parse(result.body) as { errors?: { message: string; extensions?: { code?: string } }[] };
        const first = body.errors?.[0];
        const code = first?.extensions?.code ?? ErrorCodes.badRequest.code;
        result.body = JSON.stringify({ ...body, ...errorEnvelope(code, first?.message ?? 'bad request', request.id) });
      } catch {
        result.body = JSON.stringify(errorEnvelope(ErrorCodes.badRequest.code, result.body.slice(0, 200), request.id));
      }
      result.headers.set('content-type', 'application/json; charset=utf-8');
    }
    return writeApolloResponse(reply, result);
  };
  app.get(path, handler);
  app.post(path, handler);
}

/**
 * The edge: one HTTP server serving the federated GraphQL endpoint, the REST facade, the
 * OpenAPI documents and their browser, and health. Authentication and request ids happen here
 * once for every route.
 */
export async function createEdge(config: EdgeConfig, logger: Logger, options: { supergraphSdl?: string } = {}): Promise<Edge> {
  const base = config.basePath;
  const gateway = await createGateway({
    supergraphSdl: options.supergraphSdl ?? readSupergraph(),
    subgraphUrls: config.subgraphs,
    introspection: config.graphql.introspection,
    limits: config.graphql,
    timeoutMs: config.subgraphTimeoutMs,
    logger,
  });
  try {
    const compiled = compileRoutes(routes, gateway.apiSchema);
    const authenticator = createAuthenticator({ accessKeys: config.accessSecrets, internalJwtSecret: config.internalJwtSecret });
    const app = createHttpServer({ logger, bodyLimitBytes: config.bodyLimitBytes });

    const { sendGraphiql } = registerDocs(app, base);
    registerGraphqlEndpoint(app, `${base}/graphql`, gateway, authenticator, sendGraphiql);
    registerRestRoutes(app, { basePath: base, routes: compiled, gateway, authenticator });

    const documents = new Map<string, string>();
    documents.set(`${base}/openapi.json`, JSON.stringify(buildOpenApi(compiled, gateway.apiSchema, { basePath: base })));
    for (const prefix of ['platform', 'auth', 'cicd'] as Prefix[]) {
      documents.set(`${base}/${prefix}/openapi.json`, JSON.stringify(buildOpenApi(compiled, gateway.apiSchema, { basePath: base, prefix })));
    }
    for (const [url, body] of documents) {
      app.get(url, async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
    }

    const subgraphReady = Object.entries(config.subgraphs).map(([name, url]) => ({
      name,
      check: async () => {
        const response = await undiciRequest(url.replace(/\/graphql$/, '/readyz'), { headersTimeout: 2000, bodyTimeout: 2000 });
        await response.body.dump();
        return response.statusCode === 200;
      },
    }));
    registerHealthRoutes(app, 'edge', subgraphReady, base);

    const address = await app.listen({ port: config.port, host: config.host });
    return {
      app,
      gateway,
      address,
      async stop() {
        await app.close();
        await gateway.stop();
      },
    };
  } catch (error) {
    await gateway.stop();
    throw error;
  }
}
