import type { EntityManager } from '@mikro-orm/postgresql';
import { conflictOnDuplicate, findByIdOrNotFound } from '../../../kernel/db.js';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import type { Identity } from '../../../kernel/identity.js';
import { pageNewestFirst } from '../../../kernel/pagination.js';
import type { Page } from '../../../kernel/graphql/page.js';
import { checkPasswordPolicy, hashPassword } from '../password/password.js';
import { RoleService } from '../role/role.service.js';
import { normalise, recordRevocation } from '../runtime.js';
import { checkAccountFields } from '../session/session.service.js';
import { Session } from '../session/session.entity.js';
import { Credential } from '../token/credential.entity.js';
import { User } from './user.entity.js';

/** User administration within the caller's tenant (every tenant for a super-admin). */
export class UserService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
  ) {}

  list(args: { limit?: number | null; cursor?: string | null }): Promise<Page<User>> {
    return pageNewestFirst<User>(this.em, User, 'users', {}, args, ['roles']);
  }

  async get(id: string): Promise<User> {
    return findByIdOrNotFound(this.em, User, id, 'user', {}, { populate: ['roles'] });
  }

  async create(input: { email: string; username: string; password: string; roles?: string[] | null }): Promise<User> {
    if (!this.identity.tenantId) throw new AppError(ErrorCodes.validationFailed, 'a platform-wide account creates users through tenant sign-up or the bootstrap endpoint');
    const email = normalise(input.email);
    const username = normalise(input.username);
    checkAccountFields(email, username);
    checkPasswordPolicy(input.password, { email, username });
    const roles = await new RoleService(this.em, this.identity).assignable(input.roles?.length ? input.roles : ['viewer']);
    const user = this.em.create(User, { tenantId: this.identity.tenantId, email, username, passwordHash: await hashPassword(input.password) });
    user.roles.set(roles);
    await conflictOnDuplicate(this.em.flush(), 'an account with this email or username already exists');
    return user;
  }

  async update(id: string, input: { username?: string | null; password?: string | null; active?: boolean | null; roles?: string[] | null }): Promise<User> {
    const user = await this.get(id);
    let endSessions = false;
    if (input.username) {
      const username = normalise(input.username);
      checkAccountFields(user.email, username);
      user.username = username;
    }
    if (input.password) {
      checkPasswordPolicy(input.password, { email: user.email, username: user.username });
      user.passwordHash = await hashPassword(input.password);
      endSessions = true;
    }
    if (input.active !== undefined && input.active !== null && input.active !== user.active) {
      if (user.id === this.identity.subject && !input.active) throw new AppError(ErrorCodes.conflict, 'you cannot disable your own account');
      user.active = input.active;
      endSessions ||= !input.active;
    }
    if (input.roles) {
      user.roles.set(await new RoleService(this.em, this.identity).assignable(input.roles));
      // Tokens carry roles; end the user's sessions so new ones reflect the change.
      endSessions = true;
    }
    user.updatedAt = new Date();
    if (endSessions) await this.endSessions(user);
    await conflictOnDuplicate(this.em.flush(), 'this username is taken');
    return user;
  }

  async remove(id: string): Promise<void> {
    const user = await this.get(id);
    if (user.id === this.identity.subject) throw new AppError(ErrorCodes.conflict, 'you cannot delete your own account');
    await this.endSessions(user);
    recordRevocation(this.em, 'subject', user.id);
    await this.em.flush();
    await this.em.nativeUpdate(Credential, { userId: user.id, revokedAt: null }, { revokedAt: new Date() }, { filters: false });
    // user_role rows go with it (on delete cascade).
    await this.em.nativeDelete(User, { id: user.id });
  }

  private async endSessions(user: User): Promise<void> {
    const sessions = await this.em.find(Session, { userId: user.id, revokedAt: null }, { filters: false });
    for (const session of sessions) {
      session.revokedAt = new Date();
      session.revokedReason = 'account_changed';
      recordRevocation(this.em, 'session', session.id);
    }
  }
}
