import type { MigrationObject } from '@mikro-orm/core';
import type { IResolvers } from '@graphql-tools/utils';
import type { FastifyInstance } from 'fastify';
import type { NonEmptyArray } from 'type-graphql';
import type { SubgraphConfig } from '../config.js';
import { createOrm, migrate, pingDatabase, type Orm } from '../db.js';
import { createHttpServer, registerHealthRoutes } from '../http.js';
import type { Logger } from '../logger.js';
import { createHealthResolver } from './health.js';
import { buildFederatedSchema, mountSubgraph, type FederatedSchema } from './subgraph.js';
import { mountSubgraphSubscriptions } from './subscriptions.js';
import type { PubSub } from '@graphql-yoga/subscription';

/** Everything that makes one subgraph: its schema, its tables and its GraphQL surface. */
export interface SubgraphDefinition {
  name: 'auth' | 'cicd' | 'platform';
  /** Entity classes, all living in the PostgreSQL schema named like the service. */
  entities: Function[];
  migrations: MigrationObject[];
  resolvers: Function[];
  orphanedTypes?: Function[];
  referenceResolvers?: IResolvers;
  /** The pub/sub of the subgraph's subscriptions; its presence also serves graphql-ws on /graphql. */
  pubSub?: PubSub<Record<string, [unknown]>>;
  /**
   * Runs after migrations, before listening: starts the service's workers, adds routes of its own
   * to the HTTP server, and returns what every resolver context should carry besides the basics.
   */
  setup?: (deps: SubgraphDeps) => Promise<SubgraphRuntime>;
}

export interface SubgraphDeps {
  orm: Orm;
  app: FastifyInstance;
  config: SubgraphConfig;
  logger: Logger;
}

export interface SubgraphRuntime {
  context?: Record<string, unknown>;
  stop?: () => Promise<void>;
}

/**
 * Builds the subgraph's federated schema. `checkDatabase` backs the public health query; when
 * the schema is only printed (npm run schema) there is no database and it answers false.
 */
export function buildSubgraphSchemaFor(definition: SubgraphDefinition, checkDatabase: () => Promise<boolean> = async () => false): Promise<FederatedSchema> {
  const resolvers = [createHealthResolver(definition.name, checkDatabase), ...definition.resolvers] as NonEmptyArray<Function>;
  return buildFederatedSchema({ resolvers, orphanedTypes: definition.orphanedTypes ?? [], ...(definition.pubSub ? { pubSub: definition.pubSub } : {}) }, definition.referenceResolvers);
}

export interface RunningSubgraph {
  app: FastifyInstance;
  orm: Orm;
  url: string;
  stop(): Promise<void>;
}

/** Opens the database, applies migrations, builds the schema and listens. */
export async function startSubgraph(definition: SubgraphDefinition, config: SubgraphConfig, logger: Logger): Promise<RunningSubgraph> {
  if (!config.databaseUrl) throw new Error(`${definition.name}: DATABASE_URL is not set`);
  const orm = await createOrm({
    databaseUrl: config.databaseUrl,
    schema: definition.name,
    entities: definition.entities,
    migrations: definition.migrations,
    logger,
  });
  try {
    await migrate(orm, config.databaseUrl, definition.name, logger);
    const { schema } = await buildSubgraphSchemaFor(definition, () => pingDatabase(orm));
    const app = createHttpServer({ logger });
    registerHealthRoutes(app, definition.name, [{ name: 'database', check: () => pingDatabase(orm) }]);
    const runtime = (await definition.setup?.({ orm, app, config, logger })) ?? {};
    const server = await mountSubgraph({ app, schema, em: orm.em, logger, internalJwtSecret: config.internalJwtSecret, context: runtime.context ?? {} });
    const subscriptions = definition.pubSub
      ? mountSubgraphSubscriptions({ app, schema, em: orm.em, logger, internalJwtSecret: config.internalJwtSecret, context: runtime.context ?? {} })
      : undefined;
    const address = await app.listen({ port: config.port, host: config.host });
    return {
      app,
      orm,
      url: `${address}/graphql`,
      async stop() {
        await subscriptions?.close();
        await app.close();
        await server.stop();
        await runtime.stop?.();
        await orm.close(true);
      },
    };
  } catch (error) {
    await orm.close(true);
    throw error;
  }
}
