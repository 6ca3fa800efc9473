import { Arg, Authorized, Ctx, Field, ID, InputType, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { credentialKindOf } from '../../../kernel/credentials.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { AuthContext } from '../runtime.js';
import { Tenant } from '../tenant/tenant.entity.js';
import { CredentialService } from '../token/credential.service.js';
import { User } from '../user/user.entity.js';
import { SessionService } from './session.service.js';
import { Revocation } from '../internal/revocation.entity.js';

@InputType({ description: 'Self-service sign-up: a new tenant and its first administrator.' })
export class RegisterInput {
  @Field() email!: string;
  @Field() username!: string;
  @Field({ description: 'At least 12 characters; not a common password; not containing the email or username.' }) password!: string;
  @Field(() => String, { nullable: true, description: 'Name of the new tenant; default "<username>\'s organisation".' }) tenantName?: string | null;
}

@InputType()
export class LoginInput {
  @Field({ description: 'Email or username.' }) identifier!: string;
  @Field() password!: string;
}

@InputType()
export class RefreshInput {
  @Field() refreshToken!: string;
}

@ObjectType({ description: 'A new account and its tenant.' })
export class Registration {
  @Field(() => User) user!: User;
  @Field(() => Tenant) tenant!: Tenant;
}

@ObjectType({ description: 'Tokens of a session (RFC 6749 shape).' })
export class TokenPair {
  @Field() accessToken!: string;
  @Field() refreshToken!: string;
  @Field() tokenType!: string;
  @Field(() => Int, { description: 'Seconds until the access token expires.' }) expiresIn!: number;
}

@ObjectType({ description: 'RFC 7662 token introspection. An inactive token has only active=false.' })
export class TokenIntrospection {
  @Field() active!: boolean;
  @Field(() => String, { nullable: true }) sub?: string | null;
  @Field(() => ID, { nullable: true }) tenantId?: string | null;
  @Field(() => String, { nullable: true, description: 'Space-separated scopes.' }) scope?: string | null;
  @Field(() => Int, { nullable: true }) exp?: number | null;
  @Field(() => Int, { nullable: true }) iat?: number | null;
  @Field(() => String, { nullable: true }) tokenType?: string | null;
  @Field(() => String, { nullable: true }) clientId?: string | null;
}

const INACTIVE: TokenIntrospection = { active: false };

@Resolver()
export class SessionResolver {
  @Mutation(() => Registration, { description: 'Public. Rate-limited per email.' })
  register(@Arg('input') input: RegisterInput, @Ctx() ctx: AuthContext) {
    return new SessionService(ctx.em, ctx.auth).register(input);
  }

  @Mutation(() => TokenPair, { description: 'Public. Rate-limited per identifier.' })
  login(@Arg('input') input: LoginInput, @Ctx() ctx: AuthContext) {
    return new SessionService(ctx.em, ctx.auth).login(input);
  }

  @Mutation(() => TokenPair, { description: 'Public. Each refresh token works once; reusing one revokes its session.' })
  refreshSession(@Arg('input') input: RefreshInput, @Ctx() ctx: AuthContext) {
    return new SessionService(ctx.em, ctx.auth).refresh(input.refreshToken);
  }

  @Authorized()
  @Mutation(() => Boolean, { description: 'Ends the caller\'s session: its refresh and access tokens stop working.' })
  async logout(@Ctx() ctx: AuthContext) {
    await new SessionService(ctx.em, ctx.auth).logout(ctx.identity!);
    return true;
  }

  @Query(() => TokenIntrospection, { description: 'Public. RFC 7662-style validation of any token the platform issues.' })
  async introspectToken(@Arg('token') token: string, @Ctx() ctx: AuthContext): Promise<TokenIntrospection> {
    const sessions = new SessionService(ctx.em, ctx.auth);
    if (credentialKindOf(token)) {
      const resolved = await new CredentialService(ctx.em, null).resolve(token);
      if (!resolved) return INACTIVE;
      const { identity } = resolved;
      return {
        active: true,
        sub: identity.subject,
        tenantId: identity.tenantId,
        scope: identity.scopes.join(' '),
        iat: Math.floor(resolved.issuedAt.getTime() / 1000),
        exp: resolved.expiresAt ? Math.floor(resolved.expiresAt.getTime() / 1000) : null,
        tokenType: 'Bearer',
        clientId: identity.clientId ?? null,
      };
    }
    try {
      const { identity, issuedAt, expiresAt } = await sessions.inspect(token);
      if (identity.sessionId && !(await sessions.sessionAlive(identity.sessionId))) return INACTIVE;
      const revoked = await ctx.em.count(Revocation, { kind: 'subject', value: identity.subject }, { filters: false });
      if (revoked > 0) return INACTIVE;
      return {
        active: true,
        sub: identity.subject,
        tenantId: identity.tenantId,
        scope: identity.scopes.join(' '),
        iat: issuedAt,
        exp: expiresAt,
        tokenType: 'Bearer',
        clientId: identity.clientId ?? null,
      };
    } catch (error) {
      if (error instanceof AppError && error.definition === ErrorCodes.unauthenticated) return INACTIVE;
      throw error;
    }
  }
}
