import { Arg, Authorized, Ctx, Field, ID, InputType, Mutation, Query, Resolver } from 'type-graphql';
import type { AuthContext } from '../runtime.js';
import { Role } from './role.entity.js';
import { RoleService } from './role.service.js';

@InputType()
export class CreateRoleInput {
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { description: 'Scopes members may use: read, deploy, actions, agents, admin (within your own).' }) permissions!: string[];
}

@InputType()
export class UpdateRoleInput {
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => [String], { nullable: true }) permissions?: string[] | null;
}

@Resolver()
export class RoleResolver {
  @Authorized('role:admin', 'read')
  @Query(() => [Role], { description: 'Built-in roles and the caller\'s tenant\'s own.' })
  roles(@Ctx() ctx: AuthContext) {
    return new RoleService(ctx.em, ctx.identity!).list();
  }

  @Authorized('role:admin', 'read')
  @Query(() => Role)
  role(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    return new RoleService(ctx.em, ctx.identity!).get(id);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => Role)
  createRole(@Arg('input') input: CreateRoleInput, @Ctx() ctx: AuthContext) {
    return new RoleService(ctx.em, ctx.identity!).create(input);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => Role)
  updateRole(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateRoleInput, @Ctx() ctx: AuthContext) {
    return new RoleService(ctx.em, ctx.identity!).update(id, input);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => Boolean)
  async deleteRole(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    await new RoleService(ctx.em, ctx.identity!).remove(id);
    return true;
  }
}
