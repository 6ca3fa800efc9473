import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request as undiciRequest } from 'undici';
import type { EdgeConfig } from '../kernel/config.js';
import { AppError, ErrorCodes } from '../kernel/errors.js';
import { createHttpServer, errorEnvelope, registerHealthRoutes, sendError } from '../kernel/http.js';
import type { Logger } from '../kernel/logger.js';
import { projectRoot } from '../kernel/paths.js';
import { executeApolloHttp, writeApolloResponse } from '../kernel/graphql/apolloHandler.js';
import { createGateway, type EdgeContext, type Gateway } from '../gateway/createGateway.js';
import { createAuthenticator, type Authenticator } from '../gateway/identity.js';
import { mountSubscriptions } from '../gateway/subscriptions.js';
import { compileRoutes } from './compileRoutes.js';
import { registerDocs } from './docs.js';
import { buildOpenApi } from './openapi.js';
import { createRequestBudget, type RequestBudget } from './rateLimit.js';
import { registerRestRoutes } from './registerRestRoutes.js';
import { routes, type Prefix } from './routes/index.js';

export interface Edge {
  app: FastifyInstance;
  gateway: Gateway;
  /** http://host:port of the listening edge. */
  address: string;
  stop(): Promise<void>;
}

/**
 * JSON bodies keep their raw text too: Git-host signatures are over the exact bytes received.
 * Parsing is Fastify's own (prototype-poisoning checks included).
 */
function registerJsonParser(app: FastifyInstance) {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    parse(request, body as string, done);
  });
}

/** HTML forms, for the OAuth 2.0 token endpoint. A repeated field is refused (RFC 6749 3.2). */
function registerFormParser(app: FastifyInstance) {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const fields: Record<string, string> = {};
    for (const [key, value] of new URLSearchParams(body as string)) {
      if (key in fields) return done(new AppError(ErrorCodes.oauthInvalidRequest, `form field ${key} is repeated`), undefined);
      fields[key] = value;
    }
    return done(null, fields);
  });
}

export function readSupergraph(): string {
  return readFileSync(join(projectRoot(), 'schema', 'supergraph.graphql'), 'utf8');
}

function registerGraphqlEndpoint(app: FastifyInstance, path: string, gateway: Gateway, authenticator: Authenticator, sendGraphiql: (reply: FastifyReply) => FastifyReply) {
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const wantsPage = request.method === 'GET' && !(request.query as Record<string, unknown>).query && (request.headers.accept ?? '').includes('text/html');
    if (wantsPage) return sendGraphiql(reply);
    const { identity } = request;
    const context: EdgeContext = { identity, requestId: request.id, ...(identity ? { internalToken: await authenticator.internalTokenFor(identity) } : {}) };
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
  app.route({ method: ['GET', 'POST'], url: path, config: { graphql: true }, handler });
}

/**
 * Authenticates every request once, before routing to REST, GraphQL or anything else under the
 * base path, and spends from the caller's request budget. Failures answer the envelope (and,
 * on the GraphQL endpoint, GraphQL's `errors` as well).
 */
function registerCredentialsHook(app: FastifyInstance, authenticator: Authenticator, budget: RequestBudget) {
  app.decorateRequest('identity', null);
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    let failure: AppError | undefined;
    if (config?.credentials !== 'none') {
      try {
        request.identity = await authenticator.authenticate(request);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        failure = error;
      }
    }
    if (!(await budget.consume(request, reply, request.identity))) {
      return sendError(reply, ErrorCodes.rateLimited, 'request budget exhausted; retry after the number of seconds in Retry-After');
    }
    if (failure) {
      const envelope = errorEnvelope(failure.definition.code, failure.message, request.id);
      const body = config?.graphql ? { errors: [{ message: failure.message, extensions: { code: failure.definition.code } }], ...envelope } : envelope;
      return reply.status(failure.definition.status).header('content-type', 'application/json; charset=utf-8').send(body);
    }
    return undefined;
  });
}

/**
 * The edge: one HTTP server serving the federated GraphQL endpoint, the REST facade, the
 * OpenAPI documents and their browser, and health. Authentication and request ids happen here
 * once for every route.
 */
export interface EdgeOptions {
  supergraphSdl?: string;
  /**
   * Replaces credential handling, for benchmarks that measure what authentication costs (an
   * authenticator that hands out a pre-verified identity). Never set in production code.
   */
  authenticator?: Authenticator;
}

export async function createEdge(config: EdgeConfig, logger: Logger, options: EdgeOptions = {}): Promise<Edge> {
  const base = config.basePath;
  const supergraphSdl = options.supergraphSdl ?? readSupergraph();
  const gateway = await createGateway({
    supergraphSdl,
    subgraphUrls: config.subgraphs,
    introspection: config.graphql.introspection,
    limits: config.graphql,
    timeoutMs: config.subgraphTimeoutMs,
    logger,
  });
  let authenticator: Authenticator | undefined;
  let budget: RequestBudget | undefined;
  let subscriptions: { close(): Promise<void> } | undefined;
  try {
    const compiled = compileRoutes(routes, gateway.apiSchema);
    authenticator = options.authenticator ?? createAuthenticator({
      accessKeys: config.accessSecrets,
      internalJwtSecret: config.internalJwtSecret,
      authBaseUrl: config.subgraphs.auth.replace(/\/graphql$/, ''),
      revocationPollMs: config.revocationPollMs,
      credentialCacheSecs: config.credentialCacheSecs,
      accessTokenTtlSecs: config.accessTokenTtlSecs,
      logger,
    });
    await authenticator.start();
    budget = createRequestBudget({ perMinute: config.rateLimitPerMinute, redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix });
    const app = createHttpServer({ logger, bodyLimitBytes: config.bodyLimitBytes, trustProxy: config.trustProxy });
    registerJsonParser(app);
    registerFormParser(app);
    registerCredentialsHook(app, authenticator, budget);

    const { sendGraphiql } = registerDocs(app, base);
    registerGraphqlEndpoint(app, `${base}/graphql`, gateway, authenticator, sendGraphiql);
    subscriptions = mountSubscriptions({
      app,
      path: `${base}/graphql`,
      schema: gateway.apiSchema,
      supergraphSdl,
      subgraphUrls: config.subgraphs,
      authenticator,
      logger,
    });
    registerRestRoutes(app, { basePath: base, routes: compiled, gateway, authenticator, subgraphUrls: config.subgraphs });

    const documents = new Map<string, string>();
    documents.set(`${base}/openapi.json`, JSON.stringify(buildOpenApi(compiled, gateway.apiSchema, { basePath: base })));
    for (const prefix of ['platform', 'auth', 'cicd'] as Prefix[]) {
      documents.set(`${base}/${prefix}/openapi.json`, JSON.stringify(buildOpenApi(compiled, gateway.apiSchema, { basePath: base, prefix })));
    }
    for (const [url, body] of documents) {
      app.get(url, { config: { credentials: 'none' } }, async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
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
        await subscriptions?.close();
        await app.close();
        authenticator?.stop();
        await budget?.close();
        await gateway.stop();
      },
    };
  } catch (error) {
    await subscriptions?.close();
    authenticator?.stop();
    await budget?.close();
    await gateway.stop();
    throw error;
  }
}
