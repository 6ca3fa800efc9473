import 'reflect-metadata';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { printSchemaWithDirectives, type IResolvers } from '@graphql-tools/utils';
import { GraphQLError, parse, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { buildSchema, createResolversMap, ArgumentValidationError, type AuthChecker, type BuildSchemaOptions, type NonEmptyArray } from 'type-graphql';
import type { ValidationError } from 'class-validator';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { executeApolloHttp, writeApolloResponse } from './apolloHandler.js';
import { AppError, ErrorCodes, lookupErrorCode } from '../errors.js';
import { bearerToken, hasRole, hasScope, verifyInternalToken, SCOPES, type Identity, type Scope } from '../identity.js';
import type { EntityManager } from '../db.js';
import type { Logger } from '../logger.js';
import { tenantEntityManager } from '../tenancy.js';

/** What every resolver receives. */
export interface SubgraphContext {
  identity: Identity | null;
  requestId: string;
  em: EntityManager;
  logger: Logger;
}

/**
 * The requirement strings of `@Authorized(...)`: a scope name (`read`, `deploy`, `actions`,
 * `agents`, `admin`) or a role as `role:<name>`. All listed requirements must hold.
 */
export type Requirement = Scope | `role:${string}`;

export const authChecker: AuthChecker<SubgraphContext, Requirement> = ({ context }, requirements) => {
  const { identity } = context;
  if (!identity) throw new AppError(ErrorCodes.unauthenticated, 'authentication required');
  for (const requirement of requirements) {
    if (requirement.startsWith('role:')) {
      const role = requirement.slice('role:'.length);
      if (!hasRole(identity, role)) throw new AppError(ErrorCodes.forbidden, `role "${role}" required`);
    } else if ((SCOPES as readonly string[]).includes(requirement)) {
      if (!hasScope(identity, requirement as Scope)) throw new AppError(ErrorCodes.forbidden, `scope "${requirement}" required`);
    } else {
      throw new Error(`unknown authorization requirement "${requirement}"`);
    }
  }
  return true;
};

/** The federation spec link every subgraph declares. */
const FEDERATION_LINK = /* GraphQL */ `
extend schema
  @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@provides", "@inaccessible"])
`;

export interface FederatedSchema {
  schema: GraphQLSchema;
  /** The subgraph SDL with federation directives, as composed into the supergraph. */
  sdl: string;
}

/**
 * Builds a type-graphql schema and turns it into an Apollo subgraph. type-graphql's printer
 * drops applied directives, hence `printSchemaWithDirectives` (otherwise `@key` and
 * `@shareable` would vanish from the composed supergraph).
 */
export async function buildFederatedSchema(
  options: { resolvers: NonEmptyArray<Function>; orphanedTypes?: Function[] } & Pick<BuildSchemaOptions, 'scalarsMap' | 'pubSub'>,
  referenceResolvers: IResolvers = {},
): Promise<FederatedSchema> {
  const schema = await buildSchema({
    ...options,
    authChecker,
    authMode: 'error',
    // Arguments are always instances of type-graphql's own classes, so class-validator's
    // unknown-object guard would only reject argument classes without constraints.
    validate: { forbidUnknownValues: false },
    skipCheck: true,
  });
  const sdl = `${FEDERATION_LINK.trim()}\n\n${printSchemaWithDirectives(schema)}`;
  const resolvers = createResolversMap(schema) as Record<string, Record<string, unknown>>;
  for (const [type, fields] of Object.entries(referenceResolvers)) {
    resolvers[type] = { ...(resolvers[type] ?? {}), ...(fields as Record<string, unknown>) };
  }
  return { schema: buildSubgraphSchema({ typeDefs: parse(sdl), resolvers: resolvers as never }), sdl };
}

function describeValidation(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((e) => {
    const field = path ? `${path}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => m.replace(e.property, field));
    return [...own, ...describeValidation(e.children ?? [], field)];
  });
}

/**
 * Every error leaving a subgraph carries a registry code. Validation failures are summarised;
 * anything unexpected is logged with the request id and reported without internals.
 */
export function formatSubgraphError(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
    if (original instanceof ArgumentValidationError) {
      const messages = describeValidation(original.extensions.validationErrors);
      return { ...formatted, message: messages.join('; ') || 'invalid input', extensions: { code: ErrorCodes.validationFailed.code } };
    }
    if (original instanceof AppError) return { ...formatted, extensions: { ...formatted.extensions, code: original.definition.code } };
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && (lookupErrorCode(code) || code === 'GRAPHQL_VALIDATION_FAILED' || code === 'BAD_USER_INPUT' || code === 'GRAPHQL_PARSE_FAILED')) {
      return { message: formatted.message, ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}), extensions: { code } };
    }
    logger.error({ err: original }, 'unexpected error in resolver');
    return { message: ErrorCodes.internal.description, ...(formatted.path ? { path: formatted.path } : {}), extensions: { code: ErrorCodes.internal.code } };
  };
}

/** One request's context: the service's own members, the caller, and an entity manager bound to their tenant. */
export function subgraphContext(
  base: { em: EntityManager; context: Record<string, unknown> },
  identity: Identity | null,
  requestId: string,
  logger: Logger,
): SubgraphContext {
  return { ...base.context, identity, requestId, em: tenantEntityManager(base.em, identity), logger };
}

export interface SubgraphServerOptions {
  app: FastifyInstance;
  schema: GraphQLSchema;
  em: EntityManager;
  logger: Logger;
  internalJwtSecret: string;
  /** Service-specific members every resolver context carries (see SubgraphDefinition.setup). */
  context: Record<string, unknown>;
}

/**
 * Mounts the subgraph's Apollo Server at `/graphql` on the process's HTTP server. The caller's
 * identity is the internal access token the edge forwards; a request without one runs
 * anonymously (only public fields answer), a request with a bad one is refused with 401.
 */
export async function mountSubgraph(options: SubgraphServerOptions): Promise<ApolloServer<SubgraphContext>> {
  const { app, schema, logger } = options;
  const server = new ApolloServer<SubgraphContext>({
    schema,
    // Subgraphs sit behind the edge; operators may want to introspect them directly.
    introspection: true,
    // Credentials travel as bearer headers, never cookies, so browser CSRF does not apply.
    csrfPrevention: false,
    includeStacktraceInErrorResponses: false,
    formatError: formatSubgraphError(logger),
    // main.ts stops the process on SIGINT/SIGTERM; Apollo's own handlers would call stop() a
    // second time, and a second concurrent stop() never returns.
    stopOnTerminationSignals: false,
    // Federated tracing (ftv1) is for Apollo's cloud reporting, and no field has cache hints.
    plugins: [ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginCacheControlDisabled()],
  });
  await server.start();

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    let identity: Identity | null = null;
    const header = request.headers.authorization;
    if (header !== undefined) {
      const token = bearerToken(header);
      try {
        if (!token) throw new AppError(ErrorCodes.unauthenticated, 'malformed Authorization header');
        identity = await verifyInternalToken(token, options.internalJwtSecret);
      } catch (error) {
        const message = error instanceof AppError ? error.message : 'invalid internal token';
        return reply.status(401).send({ errors: [{ message, extensions: { code: ErrorCodes.unauthenticated.code } }] });
      }
    }
    const context = subgraphContext(options, identity, request.id, request.log as Logger);
    return writeApolloResponse(reply, await executeApolloHttp(server, request, context));
  };

  app.get('/graphql', handler);
  app.post('/graphql', handler);
  return server;
}
