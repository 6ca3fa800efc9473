import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { AuthContext } from '../runtime.js';
import { CreatedCredential } from '../token/credential.resolver.js';
import { CredentialService } from '../token/credential.service.js';
import { ServiceAccount } from './service-account.entity.js';
import { ServiceAccountService } from './service-account.service.js';

@InputType()
export class CreateServiceAccountInput {
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { description: 'Scopes the account may request: read, deploy, actions, agents, admin (within your own).' }) allowedScopes!: string[];
}

@InputType()
export class CreateServiceAccountApiKeyInput {
  @Field() name!: string;
  @Field(() => Int, { nullable: true, description: 'Days until it expires; default: never.' }) expiresInDays?: number | null;
}

@InputType({ description: 'RFC 6749 section 4.4 client-credentials request.' })
export class ClientCredentialsInput {
  @Field(() => String, { nullable: true }) grantType?: string | null;
  @Field(() => String, { nullable: true }) clientId?: string | null;
  @Field(() => String, { nullable: true }) clientSecret?: string | null;
  @Field(() => String, { nullable: true, description: 'Space-separated scopes; default: all the account may use.' }) scope?: string | null;
}

@ObjectType({ description: 'A service account just created, with its client secret, which is never shown again.' })
export class CreatedServiceAccount {
  @Field(() => ServiceAccount) serviceAccount!: ServiceAccount;
  @Field() clientSecret!: string;
}

@ObjectType({ description: 'RFC 6749 access token response.' })
export class OAuthTokenResponse {
  @Field() accessToken!: string;
  @Field() tokenType!: string;
  @Field(() => Int) expiresIn!: number;
  @Field() scope!: string;
}

const ServiceAccountPage = PageOf(ServiceAccount, 'ServiceAccountPage');

@ArgsType()
class ServiceAccountListArgs extends PageArgs {}

@Resolver()
export class ServiceAccountResolver {
  @Authorized('role:admin', 'read')
  @Query(() => ServiceAccountPage)
  serviceAccounts(@Args() args: ServiceAccountListArgs, @Ctx() ctx: AuthContext) {
    return new ServiceAccountService(ctx.em, ctx.identity, ctx.auth).list(args);
  }

  @Authorized('role:admin', 'read')
  @Query(() => ServiceAccount)
  serviceAccount(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    return new ServiceAccountService(ctx.em, ctx.identity, ctx.auth).get(id);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => CreatedServiceAccount)
  createServiceAccount(@Arg('input') input: CreateServiceAccountInput, @Ctx() ctx: AuthContext) {
    return new ServiceAccountService(ctx.em, ctx.identity, ctx.auth).create(input);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => Boolean)
  async deleteServiceAccount(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    await new ServiceAccountService(ctx.em, ctx.identity, ctx.auth).remove(id);
    return true;
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => CreatedCredential, { description: 'An API key for a service account: how programs call the internal endpoints.' })
  createServiceAccountApiKey(@Arg('id', () => ID) id: string, @Arg('input') input: CreateServiceAccountApiKeyInput, @Ctx() ctx: AuthContext) {
    return new CredentialService(ctx.em, ctx.identity).createForServiceAccount(id, input);
  }

  @Mutation(() => OAuthTokenResponse, { description: 'Public. OAuth2 client-credentials grant.' })
  issueClientCredentialsToken(@Arg('input') input: ClientCredentialsInput, @Ctx() ctx: AuthContext) {
    return new ServiceAccountService(ctx.em, ctx.identity, ctx.auth).issueToken(input);
  }
}
