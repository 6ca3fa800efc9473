import { Arg, Args, ArgsType, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import type { AuthContext } from '../runtime.js';
import { Credential, CredentialKind } from './credential.entity.js';
import { API_KEY_EXPIRY_DAYS, CredentialService, PAT_EXPIRY_DAYS } from './credential.service.js';

@InputType({ description: 'A new personal access token.' })
export class CreatePersonalAccessTokenInput {
  @Field() name!: string;
  @Field(() => [String], { nullable: true, description: 'read, deploy, actions, agents, admin (admin only for administrators); default [read].' }) scopes?: string[] | null;
  @Field(() => Int, { nullable: true, description: `Days until it expires, ${PAT_EXPIRY_DAYS.min} to ${PAT_EXPIRY_DAYS.max}; default ${PAT_EXPIRY_DAYS.default}.` }) expiresInDays?: number | null;
}

@InputType({ description: 'A new API key.' })
export class CreateApiKeyInput {
  @Field() name!: string;
  @Field(() => [String], { nullable: true, description: 'Limit the key to these scopes; default: the owner\'s full permissions.' }) scopes?: string[] | null;
  @Field(() => Int, { nullable: true, description: `Days until it expires, ${API_KEY_EXPIRY_DAYS.min} to ${API_KEY_EXPIRY_DAYS.max}; default: never.` }) expiresInDays?: number | null;
}

@ObjectType({ description: 'A credential just created, with its value, which is never shown again.' })
export class CreatedCredential {
  @Field(() => Credential) credential!: Credential;
  @Field({ description: 'The secret value. Store it now: only its hash is kept.' }) value!: string;
}

export const CredentialPage = PageOf(Credential, 'CredentialPage');

@ArgsType()
class CredentialListArgs extends PageArgs {}

@Resolver()
export class CredentialResolver {
  @Authorized()
  @Query(() => CredentialPage, { description: 'The caller\'s personal access tokens (not revoked), newest first.' })
  personalAccessTokens(@Args() args: CredentialListArgs, @Ctx() ctx: AuthContext) {
    return new CredentialService(ctx.em, ctx.identity).list(CredentialKind.pat, args);
  }

  @Authorized()
  @Mutation(() => CreatedCredential)
  createPersonalAccessToken(@Arg('input') input: CreatePersonalAccessTokenInput, @Ctx() ctx: AuthContext) {
    return new CredentialService(ctx.em, ctx.identity).create(CredentialKind.pat, input);
  }

  @Authorized()
  @Mutation(() => Boolean)
  async revokePersonalAccessToken(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    await new CredentialService(ctx.em, ctx.identity).revoke(CredentialKind.pat, id);
    return true;
  }

  @Authorized()
  @Query(() => CredentialPage, { description: 'The caller\'s API keys (not revoked), newest first.' })
  apiKeys(@Args() args: CredentialListArgs, @Ctx() ctx: AuthContext) {
    return new CredentialService(ctx.em, ctx.identity).list(CredentialKind.apiKey, args);
  }

  @Authorized()
  @Mutation(() => CreatedCredential)
  createApiKey(@Arg('input') input: CreateApiKeyInput, @Ctx() ctx: AuthContext) {
    return new CredentialService(ctx.em, ctx.identity).create(CredentialKind.apiKey, input);
  }

  @Authorized()
  @Mutation(() => Boolean)
  async revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    await new CredentialService(ctx.em, ctx.identity).revoke(CredentialKind.apiKey, id);
    return true;
  }
}
