import { Authorized, Ctx, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import type { SubgraphContext } from '../../../kernel/graphql/subgraph.js';

@ObjectType({ description: 'The authenticated caller, as the platform sees them.' })
export class Viewer {
  @Field(() => ID, { description: 'User id or service-account client id.' })
  subject!: string;

  @Field(() => ID, { nullable: true, description: 'Tenant of the caller; null for platform-wide accounts.' })
  tenantId!: string | null;

  @Field(() => [String])
  roles!: string[];

  @Field(() => [String], { description: 'Scopes the credential carries (read, deploy, actions, agents, admin).' })
  scopes!: string[];
}

@Resolver()
export class ViewerResolver {
  @Authorized()
  @Query(() => Viewer, { description: 'Who the credential in use belongs to and what it may do.' })
  viewer(@Ctx() ctx: SubgraphContext): Viewer {
    const identity = ctx.identity!;
    return { subject: identity.subject, tenantId: identity.tenantId, roles: identity.roles, scopes: identity.scopes };
  }
}
