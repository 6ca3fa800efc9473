import type { SubgraphDefinition } from '../../kernel/graphql/startSubgraph.js';

/** cicd: pipelines, runs, stages, Git-host webhooks and cicd.events. */
export const cicdSubgraph: SubgraphDefinition = {
  name: 'cicd',
  entities: [],
  migrations: [],
  resolvers: [],
};
