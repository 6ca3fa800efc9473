import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { Supergraph } from '@apollo/federation-internals';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { GraphQLError, GraphQLFormattedError, GraphQLSchema, ValidationContext } from 'graphql';
import { Agent, fetch as undiciFetch } from 'undici';
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

/** Forwards the caller's internal token and the request id to every subgraph fetch. */
class IdentityForwardingDataSource extends RemoteGraphQLDataSource<EdgeContext> {
  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<EdgeContext>): void {
    const ctx = context as Partial<EdgeContext> | undefined;
    const headers = request.http!.headers;
    if (ctx?.requestId) headers.set('x-request-id', ctx.requestId);
    if (ctx?.internalToken) headers.set('authorization', `Bearer ${ctx.internalToken}`);
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
  const fetcher = async (url: string, init?: Record<string, unknown>) => {
    try {
      return await undiciFetch(url, { ...(init as object), dispatcher: agent, signal: AbortSignal.timeout(options.timeoutMs) } as never);
    } catch (error) {
      options.logger.warn({ url, err: error }, 'subgraph unreachable');
      throw new AppError(ErrorCodes.upstreamUnavailable, 'a service needed for this request is not reachable');
    }
  };

  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name, url }) => {
      const target = options.subgraphUrls[name] ?? url;
      if (!target) throw new Error(`no URL configured for subgraph ${name}`);
      return new IdentityForwardingDataSource({ url: target, fetcher: fetcher as never });
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
