import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { Supergraph } from '@apollo/federation-internals';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { GraphQLError, GraphQLFormattedError, GraphQLSchema, ValidationContext } from 'graphql';
import { Agent, request as undiciRequest } from 'undici';
import { AppError, ErrorCodes, resolveErrorCode } from '../kernel/errors.js';
import type { Identity } from '../kernel/identity.js';
import type { Logger } from '../kernel/logger.js';

/** What the edge knows about a request when it hands it to the gateway. */
export interface EdgeContext extends BaseContext {
  identity: Identity | null;
  requestId: string;
  /** Internal access token forwarded to subgraphs; absent for anonymous requests. */
  internalToken?: string;
}

export interface GatewayOptions {
  supergraphSdl: string;
  subgraphUrls: Record<string, string>;
  introspection: boolean;
  limits: { maxDepth: number; maxAliases: number; maxCost: number };
  timeoutMs: number;
  logger: Logger;
}

export interface Gateway {
  server: ApolloServer<EdgeContext>;
  /** The public (API) schema of the supergraph, against which persisted operations are validated. */
  apiSchema: GraphQLSchema;
  stop(): Promise<void>;
}

type GatewayResponse = Awaited<ReturnType<RemoteGraphQLDataSource['process']>>;

/**
 * Forwards the caller's internal token and the request id to every subgraph fetch, over undici's
 * keep-alive pool. The default implementation builds WHATWG Request objects on every call,
 * which costs the edge about a tenth of its CPU per facade request. A subgraph's non-2xx answer
 * with GraphQL errors is passed on as is (its codes reach the client); one without is an
 * upstream failure.
 */
class IdentityForwardingDataSource extends RemoteGraphQLDataSource<EdgeContext> {
  constructor(
    private readonly target: string,
    private readonly agent: Agent,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
  ) {
    super({ url: target });
  }

  /**
   * One POST per fetch of the query plan. Automatic persisted queries and cache-control
   * propagation, which the default implementation also handles, are not used here.
   */
  override async process(options: GraphQLDataSourceProcessOptions<EdgeContext>): Promise<GatewayResponse> {
    const { request } = options;
    const ctx = options.context as Partial<EdgeContext> | undefined;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (ctx?.requestId) headers['x-request-id'] = ctx.requestId;
    if (ctx?.internalToken) headers.authorization = `Bearer ${ctx.internalToken}`;
    let status: number;
    let text: string;
    try {
      const response = await undiciRequest(this.target, {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: request.query, variables: request.variables, operationName: request.operationName }),
        dispatcher: this.agent,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      this.logger.warn({ url: this.target, err: error }, 'subgraph unreachable');
      throw new AppError(ErrorCodes.upstreamUnavailable, 'a service needed for this request is not reachable');
    }
    let parsed: GatewayResponse | undefined;
    try {
      parsed = JSON.parse(text) as GatewayResponse;
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || (status >= 300 && !parsed.errors)) {
      this.logger.warn({ url: this.target, status }, 'subgraph answered without a GraphQL response');
      throw new AppError(ErrorCodes.upstreamUnavailable, 'a service needed for this request answered an error');
    }
    return parsed;
  }
}

/**
 * graphql-armor throws from inside validation by default, which Apollo Server reports as a 500;
 * reporting through the validation context makes it an ordinary 400 validation error.
 */
const reportAsValidationError = {
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(error)],
};

const LIMIT_MESSAGE = /(depth|aliases|cost) limit of \d+ exceeded|Aliases limit|Query Cost limit/i;

/** Public errors carry a registry code and the request id; internals never leak. */
export function formatEdgeError(logger: Logger) {
  return (formatted: GraphQLFormattedError): GraphQLFormattedError => {
    const rawCode = formatted.extensions?.code;
    let definition = resolveErrorCode(rawCode);
    if (rawCode === 'GRAPHQL_VALIDATION_FAILED' && LIMIT_MESSAGE.test(formatted.message)) definition = ErrorCodes.queryTooComplex;
    const message = definition === ErrorCodes.internal ? ErrorCodes.internal.description : formatted.message.replace(/^Syntax Error: /, '');
    if (definition === ErrorCodes.internal) logger.error({ error: formatted }, 'internal error in GraphQL operation');
    return {
      message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: {
        code: definition.code,
        // Rate-limited answers say when to retry; the REST facade turns it into Retry-After.
        ...(typeof formatted.extensions?.retryAfter === 'number' ? { retryAfter: formatted.extensions.retryAfter } : {}),
      },
    };
  };
}

/**
 * The supergraph gateway: @apollo/gateway on the checked-in supergraph (no runtime
 * composition, no polling), subgraph URLs from configuration, keep-alive connections through
 * undici, and depth/alias/cost limits applied before planning.
 */
export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128, pipelining: 1 });
  // @apollo/gateway otherwise probes cloud metadata endpoints and reports usage to Apollo.
  process.env.APOLLO_TELEMETRY_DISABLED ??= 'true';

  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name, url }) => {
      const target = options.subgraphUrls[name] ?? url;
      if (!target) throw new Error(`no URL configured for subgraph ${name}`);
      return new IdentityForwardingDataSource(target, agent, options.timeoutMs, options.logger);
    },
    logger: {
      debug: (m) => options.logger.debug(m),
      info: (m) => options.logger.debug(m),
      warn: (m) => options.logger.warn(m),
      error: (m) => options.logger.error(m),
    },
  });

  const server = new ApolloServer<EdgeContext>({
    gateway,
    introspection: options.introspection,
    // main.ts stops the edge on SIGINT/SIGTERM; a second stop() from Apollo's own handlers
    // would wait forever.
    stopOnTerminationSignals: false,
    plugins: [ApolloServerPluginCacheControlDisabled()],
    // The edge only accepts bearer credentials, so a browser cannot be tricked into sending
    // them; the preflight requirement would only get in the way of plain GET queries.
    csrfPrevention: false,
    includeStacktraceInErrorResponses: false,
    validationRules: [
      maxDepthRule({ n: options.limits.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...reportAsValidationError }),
      maxAliasesRule({ n: options.limits.maxAliases, ...reportAsValidationError }),
      costLimitRule({ maxCost: options.limits.maxCost, objectCost: 2, scalarCost: 1, depthCostFactor: 1.5, ignoreIntrospection: true, ...reportAsValidationError }),
    ],
    formatError: formatEdgeError(options.logger),
  });
  await server.start();

  const apiSchema = Supergraph.build(options.supergraphSdl).apiSchema().toGraphQLJSSchema();
  return {
    server,
    apiSchema,
    async stop() {
      await server.stop();
      await agent.close();
    },
  };
}
