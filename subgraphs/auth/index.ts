import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';
import { ViewerResolver } from './viewer/viewer.resolver.js';

/** auth: identity (users, roles, sessions, tokens, API keys, OAuth). */
export const authSubgraph: SubgraphDefinition = {
  name: 'auth',
  entities: [],
  migrations: [],
  resolvers: [ViewerResolver],
};
