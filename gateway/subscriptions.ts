import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Kind, parse, print, type ExecutionArgs, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { createClient } from 'graphql-ws/client';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocket } from 'ws';
import { webSocketServerAt } from '../kernel/http.js';
import { AppError, ErrorCodes } from '../kernel/errors.js';
import type { Identity } from '../kernel/identity.js';
import type { Logger } from '../kernel/logger.js';
import type { Authenticator } from './identity.js';

/**
 * Which subgraph serves each subscription field: read from the supergraph's
 * `@join__field(graph: X)` on the Subscription type (every subscription field has one owner).
 */
export function subscriptionOwners(supergraphSdl: string): Map<string, string> {
  const owners = new Map<string, string>();
  const document = parse(supergraphSdl);
  const graphNames = new Map<string, string>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.ENUM_TYPE_DEFINITION && definition.name.value === 'join__Graph') {
      for (const value of definition.values ?? []) {
        const graph = value.directives?.find((d) => d.name.value === 'join__graph');
        const name = graph?.arguments?.find((a) => a.name.value === 'name')?.value;
        if (name?.kind === Kind.STRING) graphNames.set(value.name.value, name.value);
      }
    }
  }
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || definition.name.value !== 'Subscription') continue;
    const typeGraph = definition.directives?.find((d) => d.name.value === 'join__type')?.arguments?.find((a) => a.name.value === 'graph')?.value;
    for (const field of definition.fields ?? []) {
      const fieldGraph = field.directives?.find((d) => d.name.value === 'join__field')?.arguments?.find((a) => a.name.value === 'graph')?.value;
      const graph = fieldGraph ?? typeGraph;
      if (graph?.kind === Kind.ENUM) owners.set(field.name.value, graphNames.get(graph.value) ?? graph.value.toLowerCase());
    }
  }
  return owners;
}

/**
 * GraphQL subscriptions over graphql-ws at `{base}/graphql`. The gateway cannot execute
 * subscriptions, so the edge passes them through: it authenticates the connection (the
 * `authorization` connection parameter, as a bearer token), validates the operation against the
 * public schema, and forwards it to the owning subgraph on a connection of its own that carries
 * the caller's internal token. Results flow back unchanged; closing either side closes both.
 */
export function mountSubscriptions(options: {
  app: FastifyInstance;
  path: string;
  schema: GraphQLSchema;
  supergraphSdl: string;
  subgraphUrls: Record<string, string>;
  authenticator: Authenticator;
  logger: Logger;
}): { close(): Promise<void> } {
  const owners = subscriptionOwners(options.supergraphSdl);
  const wss = webSocketServerAt(options.app, options.path);

  const identities = new WeakMap<object, Identity>();
  const server = useServer(
    {
      schema: options.schema,
      onConnect: async (ctx) => {
        const authorization = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        if (typeof authorization !== 'string') return false;
        try {
          const identity = await options.authenticator.authenticate({ headers: { authorization } } as FastifyRequest);
          if (!identity) return false;
          identities.set(ctx, identity);
          return true;
        } catch {
          return false;
        }
      },
      context: (ctx) => ({ identity: identities.get(ctx) }),
      subscribe: (args: ExecutionArgs) => forward(args),
      execute: () => ({ errors: [new AppError(ErrorCodes.badRequest, 'only subscriptions are served over WebSocket; send queries and mutations over HTTP')] }),
    },
    wss,
  );

  async function forward(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult>> {
    const identity = (args.contextValue as { identity?: Identity }).identity;
    if (!identity) throw new Error('unauthenticated');
    const operation = args.document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
    const rootField = operation?.selectionSet.selections.find((s) => s.kind === Kind.FIELD);
    const owner = rootField?.kind === Kind.FIELD ? owners.get(rootField.name.value) : undefined;
    const target = owner ? options.subgraphUrls[owner] : undefined;
    if (!target) return single({ errors: [new AppError(ErrorCodes.badRequest, 'no service serves this subscription')] });
    const internalToken = await options.authenticator.internalTokenFor(identity);
    const client = createClient({
      url: target.replace(/^http/, 'ws'),
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${internalToken}` },
      lazy: true,
      retryAttempts: 0,
    });
    const upstream = client.iterate<Record<string, unknown>>({
      query: print(args.document),
      variables: (args.variableValues ?? {}) as Record<string, unknown>,
      ...(args.operationName ? { operationName: args.operationName } : {}),
    });
    return (async function* relay() {
      try {
        for await (const result of upstream) yield result as ExecutionResult;
      } catch (error) {
        options.logger.warn({ err: error }, 'subscription upstream ended with an error');
        yield { errors: [new AppError(ErrorCodes.upstreamUnavailable, 'the service serving this subscription closed it')] };
      } finally {
        await upstream.return?.(undefined);
        await client.dispose();
      }
    })();
  }

  return {
    async close() {
      await server.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

async function* single(result: ExecutionResult): AsyncGenerator<ExecutionResult> {
  yield result;
}
