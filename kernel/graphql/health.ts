import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Directive, Field, ObjectType, Query, Resolver } from 'type-graphql';
import { projectRoot } from '../paths.js';

/** Health of one service, as answered by its `<service>Health` query. Shared by all subgraphs. */
@ObjectType({ description: 'Health of one service and of the dependencies it needs to answer.' })
@Directive('@shareable')
export class ServiceHealth {
  @Field({ description: 'Service name: auth, cicd or platform.' })
  service!: string;

  @Field({ description: '`ok` when the service and its database answer, `degraded` otherwise.' })
  status!: string;

  @Field({ description: 'Whether the service reached its database just now.' })
  database!: boolean;

  @Field({ description: 'Version of the running build.' })
  version!: string;
}


/** Version of the running build, from package.json. */
export const VERSION: string = (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Makes the public `<service>Health` query of a subgraph. Each subgraph needs its own resolver
 * class (type-graphql keeps metadata per class), hence a factory.
 */
export function createHealthResolver(service: string, checkDatabase: () => Promise<boolean>): Function {
  @Resolver()
  class HealthResolver {
    @Query(() => ServiceHealth, { name: `${service}Health`, description: `Health of the ${service} service. Public.` })
    async health(): Promise<ServiceHealth> {
      const database = await checkDatabase();
      return { service, status: database ? 'ok' : 'degraded', database, version: VERSION };
    }
  }
  return HealthResolver;
}
