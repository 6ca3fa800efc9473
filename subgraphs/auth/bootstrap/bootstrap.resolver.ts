import { Arg, Authorized, Ctx, Field, InputType, Mutation, Resolver } from 'type-graphql';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { AuthContext } from '../runtime.js';
import { User } from '../user/user.entity.js';
import { bootstrapSuperAdmin } from './bootstrap.service.js';

@InputType()
export class BootstrapSuperAdminInput {
  @Field() email!: string;
  @Field() username!: string;
  @Field() password!: string;
}

@Resolver()
export class BootstrapResolver {
  /**
   * Internal: only a platform-wide service account's API key (no tenant, scope admin) may call
   * it. It is how an installer or operator creates or repairs the super-admin.
   */
  @Authorized('role:service_account', 'admin')
  @Mutation(() => User, { description: 'Internal. Idempotent upsert of the platform super-admin (spec 4.9 rule 3).' })
  async bootstrapSuperAdmin(@Arg('input') input: BootstrapSuperAdminInput, @Ctx() ctx: AuthContext) {
    const identity = ctx.identity!;
    if (identity.credential !== 'api_key' || identity.tenantId !== null) {
      throw new AppError(ErrorCodes.forbidden, 'only the API key of a platform-wide service account may bootstrap the super-admin');
    }
    return (await bootstrapSuperAdmin(ctx.em, input)).user;
  }
}
