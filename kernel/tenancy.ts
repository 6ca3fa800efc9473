import { Filter } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { hasRole, ROLES, type Identity } from './identity.js';

export const TENANT_FILTER = 'tenant';
/** A tenant id no row has (the nil UUID), matched by callers without a tenant. */
export const NO_TENANT = '00000000-0000-0000-0000-000000000000';

interface TenantFilterArgs {
  tenantId: string | null;
  /** Platform-wide accounts (super_admin) see every tenant. */
  allTenants: boolean;
}

/**
 * Marks an entity as tenant-owned: every read through an entity manager made by
 * {@link tenantEntityManager} is limited to the caller's tenant, so another tenant's row is
 * simply not found. The filter is on by default and takes its arguments from the request; a
 * query on an entity manager that was not bound to a tenant fails instead of leaking rows.
 */
export function TenantScoped(): ClassDecorator {
  return Filter({
    name: TENANT_FILTER,
    default: true,
    // A caller with no tenant (and not a super-admin) matches no row, including rows of
    // platform-wide objects that have no tenant either.
    cond: (args: TenantFilterArgs) => (args.allTenants ? {} : { tenantId: args.tenantId ?? NO_TENANT }),
  }) as ClassDecorator;
}

/** Forks the ORM's entity manager for one request, bound to the caller's tenant. */
export function tenantEntityManager(em: EntityManager, identity: Identity | null): EntityManager {
  const fork = em.fork();
  const args: TenantFilterArgs = {
    tenantId: identity?.tenantId ?? null,
    allTenants: identity !== null && identity.tenantId === null && hasRole(identity, ROLES.superAdmin),
  };
  fork.setFilterParams(TENANT_FILTER, args);
  return fork;
}
