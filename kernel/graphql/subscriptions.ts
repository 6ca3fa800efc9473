import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { EntityManager } from '../db.js';
import { bearerToken, verifyInternalToken, type Identity } from '../identity.js';
import type { Logger } from '../logger.js';
import { tenantEntityManager } from '../tenancy.js';
import type { SubgraphContext } from './subgraph.js';

/** A WebSocket server for upgrades of `path` on the HTTP server; other upgrades are refused. */
export function webSocketServerAt(app: FastifyInstance, path: string): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true });
  app.server.on('upgrade', (request, socket, head) => {
    if (request.url?.split('?')[0] !== path) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  return wss;
}

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
      context: (ctx): SubgraphContext => {
        const identity = identities.get(ctx) ?? null;
        return { ...options.context, identity, requestId: `ws-${Date.now()}`, em: tenantEntityManager(options.em, identity), logger: options.logger } as SubgraphContext;
      },
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
