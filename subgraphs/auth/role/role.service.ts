import type { EntityManager } from '@mikro-orm/postgresql';
import { conflictOnDuplicate } from '../../../kernel/db.js';
import { AppError, ErrorCodes, isUuid, notFound } from '../../../kernel/errors.js';
import { hasRole, ROLES, SCOPES, type Identity, type Scope } from '../../../kernel/identity.js';
import { Role } from './role.entity.js';

export const BUILT_IN_ROLES = ['super_admin', 'admin', 'developer', 'viewer'] as const;

function checkPermissions(permissions: readonly string[], caller: Identity): Scope[] {
  const unknown = permissions.filter((p) => !(SCOPES as readonly string[]).includes(p));
  if (unknown.length > 0) throw new AppError(ErrorCodes.validationFailed, `unknown permissions: ${unknown.join(', ')} (allowed: ${SCOPES.join(', ')})`);
  const beyond = permissions.filter((p) => !caller.scopes.includes(p as Scope));
  if (beyond.length > 0) throw new AppError(ErrorCodes.forbidden, `you cannot grant permissions you do not hold: ${beyond.join(', ')}`);
  return SCOPES.filter((s) => permissions.includes(s));
}

/**
 * Roles visible to an administrator: the built-in ones and their tenant's own. A super-admin
 * without a tenant sees the built-in roles and every tenant's.
 */
export class RoleService {
  constructor(
    private readonly em: EntityManager,
    private readonly identity: Identity,
  ) {}

  private visible(): Record<string, unknown> {
    if (this.identity.tenantId === null && hasRole(this.identity, ROLES.superAdmin)) return {};
    return { $or: [{ tenantId: null }, { tenantId: this.identity.tenantId }] };
  }

  list(): Promise<Role[]> {
    return this.em.find(Role, this.visible(), { orderBy: { builtIn: 'desc', name: 'asc' } });
  }

  async get(id: string): Promise<Role> {
    const role = isUuid(id) ? await this.em.findOne(Role, { $and: [{ id }, this.visible()] }) : null;
    if (!role) throw notFound('role');
    return role;
  }

  /** Roles by id or name, for assigning to users; super_admin only by a super-admin. */
  async assignable(refs: readonly string[]): Promise<Role[]> {
    const ids = refs.filter(isUuid);
    const names = refs.filter((r) => !isUuid(r));
    const roles = await this.em.find(Role, { $and: [{ $or: [{ id: { $in: ids } }, { name: { $in: names } }] }, this.visible()] });
    const found = new Set(roles.flatMap((r) => [r.id, r.name]));
    const missing = refs.filter((r) => !found.has(r));
    if (missing.length > 0) throw new AppError(ErrorCodes.validationFailed, `unknown roles: ${missing.join(', ')}`);
    if (roles.some((r) => r.name === ROLES.superAdmin && r.builtIn) && !this.identity.roles.includes(ROLES.superAdmin)) {
      throw new AppError(ErrorCodes.forbidden, 'only a super-admin can grant super_admin');
    }
    return roles;
  }

  async create(input: { name: string; description?: string | null; permissions: string[] }): Promise<Role> {
    const tenantId = this.identity.tenantId;
    if (!tenantId) throw new AppError(ErrorCodes.validationFailed, 'custom roles belong to a tenant; a platform-wide account has none');
    const name = input.name.trim().toLowerCase();
    if (!/^[a-z][a-z0-9_-]{1,49}$/.test(name)) throw new AppError(ErrorCodes.validationFailed, 'name must be 2 to 50 characters: lower-case letters, digits, dash or underscore');
    if ((BUILT_IN_ROLES as readonly string[]).includes(name)) throw new AppError(ErrorCodes.conflict, `"${name}" is a built-in role`);
    const role = this.em.create(Role, { tenantId, name, description: input.description?.trim() ?? '', permissions: checkPermissions(input.permissions, this.identity) });
    await conflictOnDuplicate(this.em.flush(), `a role named "${name}" already exists`);
    return role;
  }

  async update(id: string, input: { description?: string | null; permissions?: string[] | null }): Promise<Role> {
    const role = await this.get(id);
    if (role.builtIn) throw new AppError(ErrorCodes.conflict, 'built-in roles cannot be changed');
    if (input.description !== undefined && input.description !== null) role.description = input.description.trim();
    if (input.permissions) role.permissions = checkPermissions(input.permissions, this.identity);
    await this.em.flush();
    return role;
  }

  async remove(id: string): Promise<void> {
    const role = await this.get(id);
    if (role.builtIn) throw new AppError(ErrorCodes.conflict, 'built-in roles cannot be deleted');
    // user_role rows go with it (on delete cascade).
    await this.em.nativeDelete(Role, { id: role.id });
  }
}
