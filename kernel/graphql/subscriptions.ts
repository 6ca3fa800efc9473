import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import type { EntityManager } from '../db.js';
import { bearerToken, verifyInternalToken, type Identity } from '../identity.js';
import type { Logger } from '../logger.js';
import { webSocketServerAt } from '../http.js';
import { subgraphContext } from './subgraph.js';
import { randomUUID } from 'node:crypto';

/**
 * graphql-ws on the subgraph's `/graphql`, for the subscriptions the edge passes through. The
 * edge authenticates the client and opens the upstream connection with an internal token in
 * `connectionParams.authorization`; anything else is refused at connection time.
 */
export function mountSubgraphSubscriptions(options: {
  app: FastifyInstance;
  schema: GraphQLSchema;
  em: EntityManager;
  logger: Logger;
  internalJwtSecret: string;
  context: Record<string, unknown>;
}): { close(): Promise<void> } {
  const wss = webSocketServerAt(options.app, '/graphql');
  const identities = new WeakMap<object, Identity>();
  const server = useServer(
    {
      schema: options.schema,
      onConnect: async (ctx) => {
        const token = bearerToken(String(ctx.connectionParams?.authorization ?? ''));
        if (!token) return false;
        try {
          identities.set(ctx, await verifyInternalToken(token, options.internalJwtSecret));
          return true;
        } catch {
          return false;
        }
      },
      context: (ctx) => subgraphContext(options, identities.get(ctx) ?? null, `ws-${randomUUID()}`, options.logger),
    },
    wss,
  );
  return {
    async close() {
      await server.dispose();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
