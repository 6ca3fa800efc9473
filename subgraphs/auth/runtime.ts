import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuthConfig } from '../../kernel/config.js';
import type { SubgraphContext } from '../../kernel/graphql/subgraph.js';
import type { Identity, Scope } from '../../kernel/identity.js';
import { SCOPES } from '../../kernel/identity.js';
import type { AttemptLimiter } from './limiter/attempt-limiter.js';
import { Revocation, type RevocationKind } from './internal/revocation.entity.js';
import type { Role } from './role/role.entity.js';
import type { User } from './user/user.entity.js';

/** What the auth subgraph's services need besides the request: configuration and limiters. */
export interface AuthRuntime {
  config: AuthConfig;
  /** Login attempts per identifier. */
  loginLimiter: AttemptLimiter;
  /** Registration attempts per email. */
  registerLimiter: AttemptLimiter;
  /** Client-credentials attempts per client id (secret guessing). */
  clientLimiter: AttemptLimiter;
}

export interface AuthContext extends SubgraphContext {
  auth: AuthRuntime;
}

/** How long a revocation stays in the feed: longer than any token or cache it covers lives. */
export const REVOCATION_RETENTION_SECS = 24 * 3600;

export function recordRevocation(em: EntityManager, kind: RevocationKind, value: string): void {
  em.create(Revocation, { kind, value, expiresAt: new Date(Date.now() + REVOCATION_RETENTION_SECS * 1000) });
}

/** The scopes a set of roles grants, in canonical order. */
export function scopesOf(roles: readonly Role[]): Scope[] {
  const granted = new Set(roles.flatMap((r) => r.permissions));
  return SCOPES.filter((s) => granted.has(s));
}

/** The identity of a signed-in user; roles must be loaded. */
export function identityOfUser(user: User, extra: Partial<Identity> = {}): Identity {
  const roles = user.roles.getItems();
  return { subject: user.id, tenantId: user.tenantId, roles: roles.map((r) => r.name).sort(), scopes: scopesOf(roles), ...extra };
}

export const normalise = (value: string): string => value.trim().toLowerCase();
