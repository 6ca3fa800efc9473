import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';
import { BootstrapResolver } from './bootstrap/bootstrap.resolver.js';
import { Revocation } from './internal/revocation.entity.js';
import { migrations } from './migrations/index.js';
import { Role } from './role/role.entity.js';
import { RoleResolver } from './role/role.resolver.js';
import { ServiceAccount } from './service-account/service-account.entity.js';
import { ServiceAccountResolver } from './service-account/service-account.resolver.js';
import { RefreshToken, Session } from './session/session.entity.js';
import { SessionResolver } from './session/session.resolver.js';
import { Tenant } from './tenant/tenant.entity.js';
import { Credential } from './token/credential.entity.js';
import { CredentialResolver } from './token/credential.resolver.js';
import { User } from './user/user.entity.js';
import { UserResolver } from './user/user.resolver.js';
import { ViewerResolver } from './viewer/viewer.resolver.js';

/** auth: identity (tenants, users, roles, sessions, tokens, API keys, service accounts). */
export const authSubgraph: SubgraphDefinition = {
  name: 'auth',
  entities: [Tenant, Role, User, Session, RefreshToken, Credential, ServiceAccount, Revocation],
  migrations,
  resolvers: [ViewerResolver, SessionResolver, CredentialResolver, ServiceAccountResolver, UserResolver, RoleResolver, BootstrapResolver],
  setup: async (deps) => (await import('./setup.js')).setupAuth(deps),
};
