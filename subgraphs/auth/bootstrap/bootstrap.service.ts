import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, ErrorCodes } from '../../../kernel/errors.js';
import { checkPasswordPolicy, hashPassword } from '../password/password.js';
import { Role } from '../role/role.entity.js';
import { normalise } from '../runtime.js';
import { checkAccountFields } from '../session/session.service.js';
import { User } from '../user/user.entity.js';

/**
 * Spec 4.9 rule 3: upsert the platform super-admin by email. An existing account gets the
 * username, password, active and verified state it is given and the super_admin role
 * (re-)assigned; a new one is platform-wide (no tenant). Calling again is safe and is how a lost
 * password is reset. Migrations seed only the role, never an account.
 */
export async function bootstrapSuperAdmin(em: EntityManager, input: { email: string; username: string; password: string }): Promise<{ user: User; created: boolean }> {
  const email = normalise(input.email);
  const username = normalise(input.username);
  checkAccountFields(email, username);
  checkPasswordPolicy(input.password, { email, username });
  const passwordHash = await hashPassword(input.password);
  return em.transactional(async (tx) => {
    const role = await tx.findOneOrFail(Role, { name: 'super_admin', tenantId: null });
    const existing: User | null = await tx.findOne(User, { email }, { filters: false, populate: ['roles'] });
    const clash = await tx.findOne(User, { username, ...(existing ? { id: { $ne: existing.id } } : {}) }, { filters: false });
    if (clash) throw new AppError(ErrorCodes.conflict, `username "${username}" belongs to another account`);
    const user: User = existing ?? tx.create(User, { tenantId: null, email, username, passwordHash });
    const created = !existing;
    user.username = username;
    user.passwordHash = passwordHash;
    user.active = true;
    user.emailVerified = true;
    user.updatedAt = new Date();
    if (!user.roles.getItems().some((r) => r.id === role.id)) user.roles.add(role);
    await tx.flush();
    return { user, created };
  });
}
