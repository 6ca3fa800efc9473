import { Arg, Args, ArgsType, Authorized, Ctx, Field, FieldResolver, ID, InputType, Mutation, Query, Resolver, Root } from 'type-graphql';
import { PageArgs, PageOf } from '../../../kernel/graphql/page.js';
import { Role } from '../role/role.entity.js';
import type { AuthContext } from '../runtime.js';
import { User } from './user.entity.js';
import { UserService } from './user.service.js';

@InputType()
export class CreateUserInput {
  @Field() email!: string;
  @Field() username!: string;
  @Field() password!: string;
  @Field(() => [String], { nullable: true, description: 'Role names or ids; default [viewer].' }) roles?: string[] | null;
}

@InputType({ description: 'Changes to a user; omitted fields stay. Changing password, roles or disabling ends the user\'s sessions.' })
export class UpdateUserInput {
  @Field(() => String, { nullable: true }) username?: string | null;
  @Field(() => String, { nullable: true }) password?: string | null;
  @Field(() => Boolean, { nullable: true }) active?: boolean | null;
  @Field(() => [String], { nullable: true, description: 'Role names or ids; replaces the current roles.' }) roles?: string[] | null;
}

const UserPage = PageOf(User, 'UserPage');

@ArgsType()
class UserListArgs extends PageArgs {}

@Resolver(() => User)
export class UserResolver {
  @FieldResolver(() => [Role])
  async roles(@Root() user: User): Promise<Role[]> {
    if (!user.roles.isInitialized()) await user.roles.init();
    return user.roles.getItems();
  }

  @Authorized('role:admin', 'read')
  @Query(() => UserPage, { description: 'Users of the caller\'s tenant (every tenant for a super-admin).' })
  users(@Args() args: UserListArgs, @Ctx() ctx: AuthContext) {
    return new UserService(ctx.em, ctx.identity!).list(args);
  }

  @Authorized('role:admin', 'read')
  @Query(() => User)
  user(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    return new UserService(ctx.em, ctx.identity!).get(id);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => User)
  createUser(@Arg('input') input: CreateUserInput, @Ctx() ctx: AuthContext) {
    return new UserService(ctx.em, ctx.identity!).create(input);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => User)
  updateUser(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateUserInput, @Ctx() ctx: AuthContext) {
    return new UserService(ctx.em, ctx.identity!).update(id, input);
  }

  @Authorized('role:admin', 'admin')
  @Mutation(() => Boolean)
  async deleteUser(@Arg('id', () => ID) id: string, @Ctx() ctx: AuthContext) {
    await new UserService(ctx.em, ctx.identity!).remove(id);
    return true;
  }
}
